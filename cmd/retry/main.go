package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/retrykit/retrykit/retry"
)

func main() { os.Exit(run(os.Args[1:])) }

// run is the command: it returns the exit status.
func run(args []string) int {
	cfg, err := parseArgs(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(os.Stdout)
		return 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "retry: %v\nusage: retry [flags] -- command [args...] (retry -h lists the flags)\n", err)
		return 2
	}
	path, err := exec.LookPath(cfg.argv[0])
	if err != nil && !errors.Is(err, exec.ErrDot) { // a shell runs a command found through "." in PATH, and so does retry
		fmt.Fprintf(os.Stderr, "retry: %v\n", err)
		return startFailure(err).status
	}
	r := &runner{cfg: cfg, path: path, stderr: os.Stderr, sharedOutput: sameFile(os.Stdout, os.Stderr)}
	if cfg.stdin {
		if r.input, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "retry: reading standard input: %v\n", err)
			return 2
		}
	}
	if cfg.hold {
		if r.held, err = newHold(); err != nil {
			fmt.Fprintf(os.Stderr, "retry: -hold: %v\n", err)
			return 2
		}
		defer r.held.close()
	}
	return r.run()
}

// runner runs the attempts of one run. Everything but the fields under mu
// is used by the goroutine running retry.Do alone: the attempts and the
// hooks run on it.
type runner struct {
	cfg    config
	path   string    // the command, as exec.LookPath found it
	input  []byte    // standard input, with -stdin
	held   *hold     // the running attempt's standard output, with -hold
	stderr io.Writer // for retry's own lines
	begin  time.Time

	sharedOutput bool // standard output and standard error are one file: -until gives the command one pipe for both

	attempts int    // attempts made, counting the first
	last     result // the last attempt's

	mu               sync.Mutex  // guards the fields below, shared with the signal goroutine
	proc             *os.Process // the running attempt's, nil between attempts
	sig              os.Signal   // the first signal retry got, nil if none
	sigDuringAttempt bool        // sig came while an attempt ran
}

// run makes the attempts and returns the exit status.
func (r *runner) run() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if r.cfg.timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, r.cfg.timeout)
		defer stop()
	}
	stop := r.watchSignals(cancel)
	r.begin = time.Now()
	err := retry.Do(ctx, r.attempt, r.cfg.policy, retry.WithHooks(&retry.Hooks{OnRetry: r.onRetry}))
	stop()
	status := r.exitStatus(err)
	r.finish(err, status)
	return status
}

// exitStatus is what retry exits with after the run, whose retry.Do
// returned err: 0 on success, 128+N when signal N came between attempts,
// and otherwise the last attempt's status, or 1 for an attempt that
// exited 0 without the line -until asks for or after a timeout ended it.
func (r *runner) exitStatus(err error) int {
	if sig, during := r.signalled(); sig != nil && !during {
		if s, ok := sig.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	switch {
	case err == nil:
		return 0
	case r.attempts == 0 || r.last.status == 0:
		return 1
	}
	return r.last.status
}
