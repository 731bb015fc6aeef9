package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/retrykit/retrykit/retry"
)

// result is how one attempt ended.
type result struct {
	status   int            // the exit status; 128+N when signal N ended it; 127 or 126 when it could not start
	signal   syscall.Signal // the signal that ended it, or 0
	startErr error          // why the command could not start, or nil
	timedOut bool           // a timeout (the attempt's or the run's) ended it
	matched  bool           // with -until: a line of its output matched
	outErr   error          // with -hold: why its standard output was lost, or nil
	duration time.Duration
}

// exitError is the error of a failed attempt, as package retry sees it.
type exitError struct {
	result
	until bool // -until was given
}

func (e *exitError) Error() string {
	var s string
	switch {
	case e.startErr != nil:
		return e.startErr.Error()
	case e.signal != 0:
		s = "signal: " + e.signal.String()
	default:
		s = fmt.Sprintf("exit status %d", e.status)
	}
	if e.until {
		s += ", no line matched -until"
	}
	if e.outErr != nil {
		s += ", standard output lost: " + e.outErr.Error()
	}
	return s
}

// attempt is the operation retry.Do runs: one run of the command.
func (r *runner) attempt(ctx context.Context) error {
	r.attempts++
	began := time.Now()
	res := r.runCommand(ctx)
	res.duration = time.Since(began)
	err := judge(res, r.cfg.until != nil)
	if r.held != nil {
		err = r.passOn(&res, err)
	}
	r.last = res
	return err
}

// judge returns the error of the attempt that ended as res: nil for a
// success. until says -until was given.
func judge(res result, until bool) error {
	switch {
	case res.outErr != nil:
	case until && res.matched:
		return nil
	case res.startErr == nil && res.status == 0 && !until && !res.timedOut:
		return nil // a command that a timeout ended may exit 0 as it stops: that is no success
	case res.startErr != nil && res.status == 127, errors.Is(res.startErr, fs.ErrPermission),
		errors.Is(res.startErr, syscall.ENOEXEC), errors.Is(res.startErr, errInterrupted):
		return retry.Permanent(&exitError{result: res}) // the next attempt could not start either
	}
	return &exitError{result: res, until: until && !res.matched}
}

// passOn writes the held output of the attempt that ended as res, with err,
// where it belongs: to standard output when the attempt succeeded, to
// standard error otherwise. It returns the attempt's error. A success
// whose output could not be passed on is a failure that is not retried:
// part of the output may have been.
func (r *runner) passOn(res *result, err error) error {
	if err != nil {
		_ = r.held.passOn(r.stderr, true) // as retry's own lines, which go there too
		return err
	}
	if res.outErr = r.held.passOn(os.Stdout, false); res.outErr != nil {
		return retry.Permanent(&exitError{result: *res})
	}
	return nil
}

// runCommand starts the command and waits for it to end. When ctx ends
// first for a timeout, it ends the command's process group: SIGTERM at
// once, SIGKILL after the grace period. When ctx ends for a signal, the
// signal has been passed on to the group already, and the command is left
// to end as it will, until ctx's deadline, if it has one.
func (r *runner) runCommand(ctx context.Context) result {
	cmd := exec.Command(r.path, r.cfg.argv[1:]...)
	cmd.Args[0] = r.cfg.argv[0]
	if errors.Is(cmd.Err, exec.ErrDot) {
		cmd.Err = nil // found through "." in PATH: run already chose to run it
	}
	cmd.Stdin = os.Stdin
	if r.cfg.stdin {
		cmd.Stdin = bytes.NewReader(r.input)
	}
	var matched func() bool
	cmd.Stdout, cmd.Stderr, matched = r.outputs()
	// Output a child of the command keeps open after the command ends is
	// read for at most the grace period.
	cmd.WaitDelay = r.cfg.grace
	setGroup(cmd)
	if err := r.start(cmd); err != nil {
		return startFailure(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the outcome is in cmd.ProcessState; an ErrWaitDelay changes nothing
		close(done)
	}()
	timedOut := r.await(ctx, cmd.Process, done)
	r.ended()
	res := exitResult(cmd.ProcessState)
	res.timedOut, res.matched = timedOut, matched()
	if r.held != nil {
		res.outErr = r.held.err
	}
	return res
}

// outputs returns where the command's standard output and standard error
// go, and a function that reports, once the command has ended, whether a
// line of its output matched -until.
func (r *runner) outputs() (stdout, stderr io.Writer, matched func() bool) {
	stdout, stderr = os.Stdout, os.Stderr
	if r.held != nil {
		r.held.reset()
		stdout = r.held
	}
	var out, errOut *lineMatcher
	if re := r.cfg.until; re != nil {
		out, errOut = &lineMatcher{re: re}, &lineMatcher{re: re}
		stdout, stderr = io.MultiWriter(stdout, out), io.MultiWriter(stderr, errOut)
	}
	if r.sharedOutput && (out != nil || r.held != nil) {
		// Given one writer for both, exec gives the command one pipe for
		// both, which keeps their lines in order, as 2>&1 does. -hold then
		// holds both: downstream cannot tell them apart anyway.
		stderr, errOut = stdout, out
	}
	return stdout, stderr, func() bool { return out != nil && (out.end() || errOut.end()) }
}

// await waits for the command to end, and ends it when ctx is done for a
// timeout. It reports whether it did.
func (r *runner) await(ctx context.Context, p *os.Process, done <-chan struct{}) (terminated bool) {
	select {
	case <-done:
		return false
	case <-ctx.Done():
	}
	if r.interrupted() && !untilDeadline(ctx, done) {
		return false
	}
	signalGroup(p, syscall.SIGTERM)
	grace := time.NewTimer(r.cfg.grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		killGroup(p)
		<-done
	}
	return true
}

// untilDeadline waits for the command to end, or for ctx's deadline to
// pass, whichever comes first. It reports whether the deadline did. A
// signal cancels ctx before its deadline: the timeouts still hold after it.
func untilDeadline(ctx context.Context, done <-chan struct{}) (passed bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		<-done
		return false
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}

// exitResult reads how a process ended.
func exitResult(ps *os.ProcessState) result {
	if ps == nil { // the wait itself failed, which the system does not do to a child it started
		return result{status: 1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return result{status: 128 + int(ws.Signal()), signal: ws.Signal()}
	}
	return result{status: ps.ExitCode()}
}

// startFailure is the result of a command that could not start: status
// 127 when it does not exist, 126 otherwise, as shells have it.
func startFailure(err error) result {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return result{status: 127, startErr: err}
	}
	return result{status: 126, startErr: err}
}

// sameFile reports whether a and b are the same file, as standard output
// and standard error are on a terminal or after 2>&1.
func sameFile(a, b *os.File) bool {
	as, err := a.Stat()
	if err != nil {
		return false
	}
	bs, err := b.Stat()
	return err == nil && os.SameFile(as, bs)
}
