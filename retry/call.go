package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// call is the state of one Do, DoValue or Loop call. It lives on the stack
// of the function that runs the call, so nothing is shared between calls.
type call struct {
	ctx        context.Context
	p          policy.Policy
	clk        policy.Clock
	hooks      *Hooks
	loop       bool // Loop: a success does not end the call
	classified bool // the operation classifies its own errors (RetryIfValue)
	start      time.Time
	timer      *time.Timer // the real clock's one timer, made on the first wait
}

// begin checks the call before the first attempt. It reads the clock only
// when something needs the start of the call: hooks, or a policy that is not
// Simple (a time limit, a budget, a stable-run rule, an attempt timeout).
// Otherwise the clock is first read when it is needed, so that a first-try
// success reads none.
func (c *call) begin() error {
	if c.ctx == nil {
		return errNilContext
	}
	if err := c.p.Validate(); err != nil {
		return &invalidCallError{err: err}
	}
	c.clk = c.p.Clock()
	b := c.p.Budget()
	if c.hooks != nil || !c.p.Simple() {
		c.now()
	}
	if err := done(c.ctx); err != nil {
		return c.finish(0, c.stopped(err, 0, nil))
	}
	if b != nil {
		b.Call(c.start)
	}
	return nil
}

// run is the retry loop. err is the result of the n attempts made so far
// (n is 0 or 1).
func (c *call) run(fn func(context.Context) error, err error, n int) error {
	p := c.p
	defer c.stopTimer()
	maxAttempts, maxElapsed, reset, budget := p.MaxAttempts(), p.MaxElapsed(), p.Reset(), p.Budget()
	guard := p.Guard()
	deadline, hasDeadline := c.ctx.Deadline()
	ctxDone := c.ctx.Done() // nil for a context that is never done
	timed := maxElapsed > 0 || hasDeadline || c.hooks != nil || budget != nil || reset.AfterIdle > 0 || reset.AfterStableRun > 0

	var (
		pos      int           // the schedule's position: waits since the last start-over
		prev     time.Duration // the last wait
		since    = n           // attempts since the last start-over (Loop) or the start
		epoch    = c.start     // where the time limit counts from
		runStart = c.start     // when the current attempt started (stable-run rule)
		lastFail time.Time     // when the previous attempt failed (idle rule)
	)
	timeout := p.AttemptTimeout()
	if n == 0 {
		err = c.attempt(fn, timeout)
		n, since = 1, 1
	}
	for {
		succeeded := err == nil
		if succeeded && guard != nil {
			guard.Success()
		}
		if succeeded && !c.loop {
			return c.finish(n, nil)
		}
		var m marks
		if !succeeded {
			m = inspect(err)
			if m.permanent {
				if pe, ok := err.(*permanentError); ok {
					err = pe.err
				}
				return c.finish(n, err)
			}
			if !c.classified && !p.Retryable(err) {
				return c.finish(n, err)
			}
		}
		if ctxDone != nil {
			select {
			case <-ctxDone:
				return c.finish(n, c.stopped(c.ctx.Err(), n, err))
			default:
			}
		}
		if !succeeded && guard != nil { // an outcome that says something about the dependency
			guard.Failure()
		}

		var now time.Time
		if timed {
			now = c.now()
		}
		startedOver := false
		if pos > 0 && (reset.AfterIdle > 0 || reset.AfterStableRun > 0 || succeeded) {
			idle := time.Duration(-1)
			if !lastFail.IsZero() {
				idle = now.Sub(lastFail)
			}
			if reset.StartsOver(succeeded, now.Sub(runStart), idle) {
				pos, prev, startedOver = 0, 0, true
				if c.loop {
					// A failed run that reset the back-off is the first
					// failure of the new sequence; a success is none.
					since, epoch = 1, now
					if succeeded {
						since = 0
					}
				}
			}
		}
		if !succeeded {
			lastFail = now
		}
		if maxAttempts > 0 && since >= maxAttempts {
			return c.finish(n, c.exhausted(n, err, ""))
		}

		pos++
		d := p.Backoff(pos, prev)
		if m.hinted {
			d = max(m.hint, 0)
			if limit := p.Cap(); limit > 0 {
				d = min(d, limit)
			}
		}
		if d > 0 && now.IsZero() {
			now = c.now() // a real wait is coming: time it from here at the latest
		}
		if maxElapsed > 0 && d > maxElapsed-max(now.Sub(epoch), 0) { // written so that a huge d cannot overflow
			e := c.exhausted(n, err, fmt.Sprintf("the next wait of %v would pass the %v limit", d, maxElapsed))
			e.hint = m.hinted
			return c.finish(n, e)
		}
		if hasDeadline && !now.Add(d).Before(deadline) {
			e := &Error{Attempts: n, Elapsed: c.elapsed(now), Last: err, Cause: context.DeadlineExceeded}
			e.detail = fmt.Sprintf("the next wait of %v would end after the deadline", d)
			e.hint = m.hinted
			return c.finish(n, e)
		}
		if guard != nil && !succeeded && !guard.AllowRetry() {
			e := &Error{Attempts: n, Elapsed: c.elapsed(now), Last: err, Cause: ErrThrottled}
			return c.finish(n, e)
		}
		if budget != nil && !budget.TryRetry(now) {
			e := &Error{Attempts: n, Elapsed: c.elapsed(now), Last: err, Cause: ErrBudgetExhausted}
			return c.finish(n, e)
		}
		if c.hooks != nil && c.hooks.OnRetry != nil {
			c.hooks.OnRetry(RetryEvent{Attempt: n, Err: err, Delay: d, Elapsed: now.Sub(epoch), Hinted: m.hinted, Reset: startedOver})
		}
		if d > 0 {
			if cerr := c.wait(d); cerr != nil {
				return c.finish(n, c.stopped(cerr, n, err))
			}
		}
		prev = d
		if reset.AfterStableRun > 0 {
			runStart = c.now()
		}
		if timeout == 0 {
			err = fn(c.ctx)
		} else {
			err = c.attempt(fn, timeout)
		}
		n++
		since++
	}
}

// attempt runs fn once, under the policy's per-attempt timeout if it has one.
func (c *call) attempt(fn func(context.Context) error, timeout time.Duration) error {
	if timeout <= 0 {
		return fn(c.ctx)
	}
	var (
		actx   context.Context
		cancel context.CancelFunc
	)
	if wt, ok := c.clk.(interface {
		WithTimeout(context.Context, time.Duration) (context.Context, context.CancelFunc)
	}); ok {
		actx, cancel = wt.WithTimeout(c.ctx, timeout)
	} else {
		actx, cancel = context.WithTimeout(c.ctx, timeout)
	}
	defer cancel()
	err := fn(actx)
	if err != nil && done(actx) != nil && done(c.ctx) == nil {
		err = &attemptTimeoutError{timeout: timeout, err: err}
	}
	return err
}

// wait waits d or until ctx is done, whichever comes first, and returns
// ctx's error in the second case. On the real clock it reuses one timer for
// the whole call; a policy's clock gets After.
func (c *call) wait(d time.Duration) error {
	var fired <-chan time.Time
	switch {
	case c.clk != nil:
		fired = c.clk.After(d)
	case c.timer == nil:
		c.timer = time.NewTimer(d)
		fired = c.timer.C
	default:
		// Since Go 1.23 Reset leaves no stale tick behind in the channel.
		c.timer.Reset(d)
		fired = c.timer.C
	}
	select {
	case <-fired:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

func (c *call) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// now reads the clock, and takes the first reading as the call's start.
func (c *call) now() time.Time {
	var t time.Time
	if c.clk == nil {
		t = time.Now()
	} else {
		t = c.clk.Now()
	}
	if c.start.IsZero() {
		c.start = t
	}
	return t
}

// elapsed returns the time since the call's start as of t, or 0 if the call
// never read the clock.
func (c *call) elapsed(t time.Time) time.Duration {
	if c.start.IsZero() {
		return 0
	}
	if t.IsZero() {
		t = c.now()
	}
	return t.Sub(c.start)
}

func (c *call) exhausted(n int, last error, detail string) *Error {
	return &Error{Attempts: n, Elapsed: c.elapsed(time.Time{}), Last: last, Cause: ErrExhausted, detail: detail}
}

// stopped builds the error for a call that ended because ctx is done, with
// cause = ctx.Err(). Only call it once Done is closed: some contexts read
// their error without a lock.
func (c *call) stopped(cause error, n int, last error) *Error {
	e := &Error{Attempts: n, Elapsed: c.elapsed(time.Time{}), Last: last, Cause: cause}
	if cc := context.Cause(c.ctx); cc != nil && cc != cause && cc != c.ctx.Err() {
		e.ctxCause = cc
	}
	return e
}

// finish tells the hooks how the call ended and returns err.
func (c *call) finish(n int, err error) error {
	if c.hooks != nil && c.hooks.OnDone != nil {
		c.hooks.OnDone(DoneEvent{Attempts: n, Elapsed: c.elapsed(time.Time{}), Err: err})
	}
	return err
}

// done returns ctx's error if ctx is done, reading it only after Done is
// closed, which is race-free even for contexts whose Err takes no lock.
func done(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}
