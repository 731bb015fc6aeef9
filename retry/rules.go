package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/policy"
)

// The rules of a call, one function each, in the order the loop applies
// them.

// outcome accounts for the attempt just made: it tells the guard, applies
// the reset rules and Loop's run of failures, and reports whether the call
// ends there, and with what: a success ends Do, a Permanent error or one the
// policy does not retry ends any call.
func (c *call) outcome(err error) (end bool, final error) {
	c.verdict.Classify(err)
	if err != nil {
		if c.verdict.Outcome != admit.Overloaded {
			c.mixed = true
		}
		switch {
		case c.byContext(err):
			// The caller's context ended the call during the attempt, whose
			// error says so: the call ends as ctx ending does, whatever the
			// policy says of that error.
		case c.verdict.Pushback && !c.loop: // Loop waits a pushback out as a failed run
			if c.hedge == nil {
				c.record(err)
			}
			return true, c.giveUp(err, ErrPushback, "")
		case c.verdict.Permanent:
			if pe, ok := err.(*classify.Permanent); ok {
				err = pe.Err
			}
			return true, err
		case !c.p.Retryable(err):
			return true, err
		}
	}
	if c.hedge == nil { // a hedged round tells the guard of each of its attempts
		c.record(err)
	}
	if err == nil && !c.loop {
		return true, nil
	}
	c.reset(err == nil)
	return false, nil
}

// record tells the guard, if any, what the attempt just made said about
// the dependency. An attempt the caller's context cut short says nothing.
func (c *call) record(err error) {
	if g := admission.Of(c.p); g != nil && c.stopping() == nil {
		g.Record(c.admitted, c.verdict.Outcome)
	}
}

// reset applies the reset rules after an attempt or Loop run that
// succeeded or failed, and ends Loop's run of failures after a success.
func (c *call) reset(succeeded bool) {
	rule := c.p.ResetRule()
	c.started = false
	if !c.loop && !succeeded && rule.AfterIdle == 0 && rule.AfterStableRun == 0 {
		return // no rule looks at a failure
	}
	var now time.Time
	if rule.AfterIdle > 0 || rule.AfterStableRun > 0 || c.loop {
		now = c.clock.now()
	}
	idle := time.Duration(-1)
	if !c.lastFail.IsZero() {
		idle = now.Sub(c.lastFail)
	}
	if startsOver(rule, succeeded, now.Sub(c.clock.runStart), idle) {
		// In Loop every start-over counts, the first run's too; in Do
		// only one that has something to start over.
		c.started = c.pos > 0 || c.loop
		c.pos, c.prev = 0, 0
		if c.loop { // a failed run that started over is the first failure of the new sequence
			c.count = 1
			c.clock.restart(now)
		}
	}
	if c.loop && succeeded { // the limits count the next run of failures afresh
		c.count = 0
		c.clock.restart(now)
	}
	if !succeeded && rule.AfterIdle > 0 {
		c.lastFail = now
	}
}

// nextWait returns the wait before the next attempt: the schedule's delay,
// or the operation's hint, and at least Loop's pause.
func (c *call) nextWait(err error) (d time.Duration, hinted bool) {
	c.pos++
	d = c.p.Backoff(c.pos, c.prev)
	if err != nil && c.verdict.Hinted {
		d, hinted = max(c.verdict.Hint, 0), true
	}
	if c.loop {
		d = max(d, loopMinPause)
	}
	return d, hinted
}

// limits returns the error that ends the call before a wait of d, if a limit
// says so: the attempt limit, the hint ceiling, the time limit, the
// deadline. The pause after a successful Loop run is not a retry: the
// attempt and time limits, which bound a run of failures, do not end it.
func (c *call) limits(err error, d time.Duration, hinted bool) *Error {
	p, failed := c.p, err != nil
	cause := ErrExhausted
	if c.denied && !c.loop {
		cause = ErrThrottled // the call ran out while the guard held it back; Loop's limits are its own
	}
	if failed && p.MaxAttempts() > 0 && c.count >= p.MaxAttempts() {
		return c.giveUp(err, cause, "")
	}
	if failed && c.oneAttempt(err) {
		return c.giveUp(err, cause, "the request served is a retry already: one attempt")
	}
	deadline, hasDeadline := c.deadline, !c.deadline.IsZero()
	if hinted && d > p.MaxHint() {
		e := c.giveUp(err, ErrHintTooLong, fmt.Sprintf("the operation asked to wait %v, above the %v hint ceiling", d, p.MaxHint()))
		e.deadline = !c.loop && hasDeadline && !c.clock.now().Add(d).Before(deadline)
		return e
	}
	if (!failed || p.MaxElapsed() == 0) && !hasDeadline {
		return nil
	}
	now := c.clock.now()
	var e *Error
	switch {
	case failed && p.MaxElapsed() > 0 && d > p.MaxElapsed()-c.clock.elapsed(now): // written so that a huge d cannot overflow
		e = c.giveUp(err, cause, fmt.Sprintf("the next wait of %v would pass the %v limit", d, p.MaxElapsed()))
	case hasDeadline && !now.Add(d).Before(deadline) && c.loop:
		// A Loop's context is its lifetime, not a limit: ending a pause
		// early is the context ending.
		e = c.giveUp(err, context.DeadlineExceeded, fmt.Sprintf("the next wait of %v would not end before the deadline", d))
	case hasDeadline && !now.Add(d).Before(deadline):
		e = c.giveUp(err, cause, fmt.Sprintf("the next wait of %v would not end before the deadline", d))
	default:
		return nil
	}
	if !c.loop && hasDeadline && !now.Add(d).Before(deadline) {
		e.deadline = true // the wait would pass the deadline, whichever limit is named
	}
	switch {
	case hinted && e.Cause == ErrExhausted:
		// The hint, not the schedule, asked for the wait past the limit:
		// Cause says so, as it does for a hint above the ceiling.
		e.Cause = ErrHintTooLong
		e.detail = strings.Replace(e.detail, "the next wait of", "the hinted wait of", 1)
	case hinted:
		e.also = ErrHintTooLong
	}
	return e
}

// admit asks the guard, if any, for the retry about to start. The run after
// a successful Loop run is not a retry and needs no admission.
func (c *call) admit(err error) bool {
	g := admission.Of(c.p)
	c.denied = g != nil && err != nil && !g.Allow(c.clock.now())
	if c.denied {
		c.denials++
	}
	return !c.denied
}

// backOff waits d before the next attempt, and returns how long it waited,
// or ctx's error if ctx ended first. After a retry the guard denied, the
// wait ends early when a success lets the retry go (see admit.Guard.Denied):
// the dependency serves again, and the retry need not wait out a back-off
// drawn while it did not. A server's hint is waited out as given.
func (c *call) backOff(d time.Duration, hinted bool) (time.Duration, error) {
	g := admission.Of(c.p)
	if !c.denied || hinted || g == nil || d <= 0 {
		return d, c.clock.wait(c.ctx, d)
	}
	t, began := g.Denied(), c.clock.now()
	turned, err := c.clock.waitFor(c.ctx, d, t.C)
	g.Withdraw(t)
	if turned {
		d = min(max(c.clock.now().Sub(began), 0), d)
	}
	return d, err
}

// lastChance reports whether the retry just denied was the last one the
// attempt limit allows: waiting for it would be for nothing. A Loop waits
// whatever the guard says: it is never ended by it.
func (c *call) lastChance() bool {
	return !c.loop && c.p.MaxAttempts() > 0 && c.count+1 >= c.p.MaxAttempts()
}

// tell announces the wait about to start to the hooks.
func (c *call) tell(err error, d time.Duration, hinted bool) {
	if c.hooks.n > 0 {
		c.told = RetryEvent{Attempt: c.attempts, Err: err, Delay: d, Elapsed: c.clock.elapsed(time.Time{}),
			Hinted: hinted, StartedOver: c.started}
		c.hooks.retry(c.ctx, c.told)
	}
	c.started = false
}

// giveUp builds the error of a call that ends for cause, with last the
// last attempt's error.
func (c *call) giveUp(last error, cause error, detail string) *Error {
	e := &Error{Attempts: c.attempts, Elapsed: c.clock.elapsed(time.Time{}), Last: last, Cause: cause, detail: detail}
	if c.loop {
		e.Attempts, e.total, e.loop = c.count, c.attempts, true
	}
	return e
}

// cutOff reports whether err, an attempt's error, is only the error of
// the call's context, which has ended: it matches context.Canceled,
// context.DeadlineExceeded or the context's cause, and is no attempt
// timeout. Such an error says nothing about the dependency, so it is not
// the call's last error when an attempt before it failed (see Error.Last).
func (c *call) cutOff(err error) bool {
	if err == nil || c.stopping() == nil || errors.Is(err, ErrAttemptTimeout) {
		return false
	}
	return onlyContext(err, c.ctx.Err(), context.Cause(c.ctx))
}

// byContext reports whether err, an attempt's error, says that the call's
// context, now ended, cut the attempt off: it matches the context's error,
// its cause, or context.Canceled, which the call gives the attempts it
// cancels, alone or beside an error of its own.
func (c *call) byContext(err error) bool {
	ctxErr := c.stopping()
	if err == nil || ctxErr == nil {
		return false
	}
	cause := context.Cause(c.ctx)
	return errors.Is(err, ctxErr) || errors.Is(err, context.Canceled) || (cause != nil && errors.Is(err, cause))
}

// onlyContext reports whether err wraps nothing but the call's context's
// error ctxErr, its cause, or context.Canceled, which the call gives the
// attempts it cancels. An error that joins an error of its own to it
// (fmt.Errorf with two %w, errors.Join) is not, nor is a deadline of the
// attempt's own under a cancelled call.
func onlyContext(err, ctxErr, cause error) bool {
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		if inner := e.Unwrap(); inner != nil {
			return onlyContext(inner, ctxErr, cause)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if !onlyContext(inner, ctxErr, cause) {
				return false
			}
		}
		return len(e.Unwrap()) > 0
	}
	return errors.Is(err, ctxErr) || errors.Is(err, context.Canceled) || (cause != nil && errors.Is(err, cause))
}

// stopped builds the error of a call that ends because ctx is done, with
// cause = ctx.Err(). Only call it once Done is closed: some contexts read
// their error without a lock.
func (c *call) stopped(cause, last error) *Error {
	e := c.giveUp(last, cause, "")
	if cc := context.Cause(c.ctx); cc != nil && cc != cause {
		e.ctxCause = cc
	}
	return e
}

// startsOver reports whether rule starts the sequence over after an attempt
// or run. succeeded says whether it succeeded, and ran is how long it
// lasted. idle is how long after the previous failure it ended, and is
// negative when there was none.
func startsOver(rule policy.ResetRule, succeeded bool, ran, idle time.Duration) bool {
	return succeeded && rule.OnSuccess ||
		rule.AfterStableRun > 0 && ran >= rule.AfterStableRun ||
		rule.AfterIdle > 0 && idle > rule.AfterIdle
}
