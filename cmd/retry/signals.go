package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// errInterrupted ends an attempt that a signal came before: it does not
// start.
var errInterrupted = errors.New("retry: interrupted before the attempt started")

// signalError is the cause of a run that a signal ended.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "got signal " + e.sig.String() }

// forwarded are the signals passed on to the command. A signal retry was
// started with ignored stays ignored (nohup keeps working). SIGQUIT is
// among them because Go's own reaction to it, a stack dump and exit status
// 2, would leave the command's process group running and read as bad flags.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// watchSignals passes the signals retry gets on to the running command's
// process group, and cancels the run with the first one, so that no
// further attempt starts and a wait ends at once. stop undoes it.
func (r *runner) watchSignals(cancel context.CancelCauseFunc) (stop func()) {
	ch := make(chan os.Signal, 4)
	for _, sig := range forwarded {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case sig := <-ch:
				r.forward(sig)
				cancel(&signalError{sig: sig})
			case <-quit:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(quit)
		wg.Wait()
	}
}

// forward records sig and passes it on to the running command, if any.
func (r *runner) forward(sig os.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sig == nil {
		r.sig, r.sigDuringAttempt = sig, r.proc != nil
	}
	if r.proc != nil {
		signalGroup(r.proc, sig)
	}
}

// start starts cmd unless a signal came first, and makes it the process
// that signals go to.
func (r *runner) start(cmd *exec.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sig != nil {
		return errInterrupted
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.proc = cmd.Process
	return nil
}

// ended stops signals going to the command's process group: the command
// has ended.
func (r *runner) ended() {
	r.mu.Lock()
	r.proc = nil
	r.mu.Unlock()
}

// interrupted reports whether a signal has come.
func (r *runner) interrupted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sig != nil
}

// signalled returns the first signal, and whether it came while an attempt
// ran; nil if none came.
func (r *runner) signalled() (os.Signal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sig, r.sigDuringAttempt
}
