package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
	"github.com/retrykit/retrykit/policy"
)

// loopMinPause is the shortest pause Loop makes between two runs.
const loopMinPause = 10 * time.Millisecond

// call is the state of one Do, DoValue or Loop call. It lives on the stack
// of the function that runs the call, so nothing is shared between calls.
type call struct {
	ctx   context.Context
	p     policy.Policy
	s     *plumb.Settings // p's
	clk   plumb.Clock
	hooks *Hooks
	loop  bool // Loop: a success does not end the call
	begun time.Time
	pos   int         // zero-delay waits made before run, by immediate
	timer *time.Timer // the real clock's one timer, made on the first wait
	hedge *hedger     // nil unless the call hedges
}

// begin checks the call before the first attempt. It reads the clock only
// when the policy needs the start of the first attempt: a retry budget (the
// call is recorded at that time) or a stable-run reset rule. Otherwise the
// clock is first read when the first attempt has failed, so that a
// first-try success reads none.
func (c *call) begin() error {
	if c.ctx == nil {
		return c.finish(0, errNilContext, time.Time{})
	}
	if err := c.p.Validate(); err != nil {
		return c.finish(0, &invalidCallError{err: err}, time.Time{})
	}
	c.clk = c.s.Clock
	if err := done(c.ctx); err != nil {
		return c.finish(0, c.stopped(err, 0, 0, nil, time.Time{}), time.Time{})
	}
	b := c.s.Budget
	if b != nil || c.s.ResetStable > 0 {
		c.begun = c.now()
	}
	if b != nil {
		plumb.BudgetCall(b, c.begun)
	}
	return nil
}

// run is the retry loop. err is the result of the n attempts made so far
// (n is 0 or 1).
//
// Elapsed times (the time limit, Error.Elapsed, the hooks' Elapsed) count
// from the end of the first attempt, which is when the clock is first read,
// and in Loop from the end of the last run that succeeded or started the
// back-off over.
func (c *call) run(fn func(context.Context) error, err error, n int) error {
	p, s := c.p, c.s
	defer c.stopTimer()
	maxAttempts, maxElapsed, budget, guard := s.MaxAttempts, s.MaxElapsed, s.Budget, s.Guard
	resetIdle, resetStable := s.ResetIdle, s.ResetStable
	deadline, hasDeadline := c.ctx.Deadline()
	ctxDone := c.ctx.Done() // nil for a context that is never done
	// A Loop is timed: its start-overs move the epoch, which needs the
	// time of every run's end.
	timed := maxElapsed > 0 || hasDeadline || c.hooks != nil || budget != nil || resetIdle > 0 || resetStable > 0 || c.loop
	// Elapsed times count from the end of the first attempt. They can be
	// seen only where something can stop the call or report on it; a call
	// with no limit, hooks, budget or guard and a context that is never done
	// ends only by its operation's word, and reads no clock for zero-delay
	// retries.
	observed := timed || maxAttempts > 0 || ctxDone != nil || guard != nil

	var (
		pos      = c.pos       // the schedule's position: waits since the last start-over
		prev     time.Duration // the last wait
		since    int           // attempts since the start (Do); failed runs in a row (Loop)
		epoch    time.Time     // where elapsed times count from
		runStart = c.begun     // when the current attempt started (stable-run rule)
		lastFail time.Time     // when the previous attempt failed (idle rule)
	)
	timeout := s.AttemptTimeout
	if n == 0 {
		n = 1
		if c.hedge != nil {
			n, err = c.round(0, maxAttempts, epoch)
		} else {
			err = c.attempt(fn, timeout)
		}
	}
	since = n
	if c.loop && err == nil {
		since = 0
	}
	for {
		succeeded := err == nil
		// A hedged round's attempt that was counted as failed for being
		// slow is not counted again, whatever it returned.
		counted := c.hedge != nil && c.hedge.charged
		if succeeded && guard != nil && !counted {
			plumb.GuardSuccess(guard)
		}
		if succeeded && !c.loop {
			return c.finish(n, nil, epoch)
		}
		var m marks
		if !succeeded {
			m = inspect(err)
			if m.permanent {
				if pe, ok := err.(*permanentError); ok {
					err = pe.err
				}
				return c.finish(n, err, epoch)
			}
			if !p.Retryable(err) {
				return c.finish(n, err, epoch)
			}
		}
		var now time.Time
		if timed || ((observed || m.hinted) && epoch.IsZero()) {
			now = c.now()
		}
		if epoch.IsZero() {
			epoch = now // zero while nothing observes it
			if c.hedge != nil && !c.hedge.firstEnd.IsZero() {
				epoch = c.hedge.firstEnd // the first attempt ended before its round did
			}
		}
		startedOver := false
		if succeeded || resetIdle > 0 || resetStable > 0 {
			idle := time.Duration(-1)
			if !lastFail.IsZero() {
				idle = now.Sub(lastFail)
			}
			if s.StartsOver(succeeded, now.Sub(runStart), idle) {
				// In Loop every start-over counts, the first run's too;
				// in Do only one that has something to start over.
				startedOver = pos > 0 || c.loop
				pos, prev = 0, 0
				if c.loop {
					// A failed run that started the back-off over is the
					// first failure of the new sequence.
					since, epoch = 1, now
				}
			}
		}
		if c.loop && succeeded {
			// A success ends a run of failures, whatever the reset rule:
			// the attempt and time limits count the next one afresh.
			since, epoch = 0, now
		}
		// The context is asked once the outcome has been accounted for, so
		// that a Loop stopped after a run that started the back-off over
		// reports the new sequence.
		if ctxDone != nil {
			select {
			case <-ctxDone:
				return c.finish(n, c.stopped(c.ctx.Err(), n, since, err, epoch), epoch)
			default:
			}
		}
		if !succeeded && guard != nil && !counted { // an outcome that says something about the dependency
			plumb.GuardFailure(guard)
		}
		if !succeeded {
			lastFail = now
			if maxAttempts > 0 && since >= maxAttempts {
				return c.finish(n, c.giveUp(n, since, err, epoch, now, ErrExhausted, ""), epoch)
			}
		}

		pos++
		d := p.Backoff(pos, prev)
		if m.hinted {
			d = max(m.hint, 0)
			if limit := s.MaxHint; d > limit {
				if epoch.IsZero() {
					now = c.now()
					epoch = now // unobserved until now: Elapsed starts here
				}
				e := c.giveUp(n, since, err, epoch, now, ErrHintTooLong,
					fmt.Sprintf("the operation asked to wait %v, above the %v hint ceiling", d, limit))
				return c.finish(n, e, epoch)
			}
		}
		if c.loop {
			d = max(d, loopMinPause)
		}
		if d > 0 && now.IsZero() {
			now = c.now() // a real wait is coming: time it from here at the latest
		}
		// The pause after a successful Loop run is not a retry: the time
		// limit, which bounds a run of failures, does not end it.
		if maxElapsed > 0 && !succeeded && d > maxElapsed-max(now.Sub(epoch), 0) { // written so that a huge d cannot overflow
			e := c.giveUp(n, since, err, epoch, now, ErrExhausted, fmt.Sprintf("the next wait of %v would pass the %v limit", d, maxElapsed))
			e.hint = m.hinted
			return c.finish(n, e, epoch)
		}
		if hasDeadline && !now.Add(d).Before(deadline) {
			e := c.giveUp(n, since, err, epoch, now, context.DeadlineExceeded, fmt.Sprintf("the next wait of %v would end after the deadline", d))
			e.hint = m.hinted
			return c.finish(n, e, epoch)
		}
		// The pause after a successful Loop run is not a retry: it spends
		// nothing from the guard or the budget. The guard is asked first, so
		// that a retry it denies spends no budget.
		if guard != nil && !succeeded && !plumb.GuardAllowRetry(guard) {
			return c.finish(n, c.giveUp(n, since, err, epoch, now, ErrThrottled, "the guard sees failures dominate"), epoch)
		}
		if budget != nil && !succeeded && !plumb.BudgetTryRetry(budget, now) {
			return c.finish(n, c.giveUp(n, since, err, epoch, now, ErrThrottled, "the retry budget is spent"), epoch)
		}
		if c.hooks != nil && c.hooks.OnRetry != nil {
			c.hooks.OnRetry(c.ctx, RetryEvent{Attempt: n, Err: err, Delay: d, Elapsed: now.Sub(epoch), Hinted: m.hinted, StartedOver: startedOver})
		}
		if d > 0 {
			if cerr := c.wait(d); cerr != nil {
				return c.finish(n, c.stopped(cerr, n, since, err, epoch), epoch)
			}
		}
		prev = d
		if resetStable > 0 || (c.loop && budget != nil) {
			runStart = c.now()
		}
		if c.loop && budget != nil {
			plumb.BudgetCall(budget, runStart) // each run of a Loop is a call
		}
		k := 1
		switch {
		case c.hedge != nil:
			k, err = c.round(n, maxAttempts-since, epoch)
		case timeout == 0:
			err = fn(c.ctx)
		default:
			err = c.attempt(fn, timeout)
		}
		n += k
		if c.loop && err == nil {
			since = 0
		} else {
			since += k
		}
	}
}

// immediate makes the zero-delay retries of a Do call whose first attempt
// failed with err while nothing observes the call: no limit, budget, guard,
// jitter, reset timing or per-attempt timeout, and a context that is never
// done. Only the operation's word and the schedule's delay matter then. It
// returns at the first outcome it cannot handle alone (a success, a mark,
// an error the policy does not retry, a delay to wait) with the attempts
// and zero waits made so far, for run to go on from.
func immediate(ctx context.Context, fn func(context.Context) error, p policy.Policy, s *plumb.Settings, first error) (n, pos int, err error) {
	n, err = 1, first
	if !s.Unobserved || ctx.Done() != nil {
		return n, 0, err
	}
	for err != nil {
		if m := inspect(err); m.permanent || m.hinted || (s.RetryIf != nil && !s.RetryIf(err)) ||
			(!s.ZeroDelays && p.Backoff(pos+1, 0) > 0) {
			break
		}
		pos++
		err = fn(ctx)
		n++
	}
	return n, pos, err
}

// attempt runs fn once, under the policy's per-attempt timeout if it has one.
func (c *call) attempt(fn func(context.Context) error, timeout time.Duration) error {
	if timeout <= 0 {
		return fn(c.ctx)
	}
	actx, cancel := withTimeout(c.clk, c.ctx, timeout)
	defer cancel()
	err := fn(actx)
	if err != nil && done(actx) != nil && done(c.ctx) == nil {
		err = &attemptTimeoutError{timeout: timeout, err: err}
	}
	return err
}

// withTimeout returns a context that expires timeout from now on clk: the
// clock's own WithTimeout when it has one (benbjohnson/clock's Mock does),
// the real clock's otherwise.
func withTimeout(clk plumb.Clock, ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if wt, ok := clk.(interface {
		WithTimeout(context.Context, time.Duration) (context.Context, context.CancelFunc)
	}); ok {
		return wt.WithTimeout(ctx, timeout)
	}
	return context.WithTimeout(ctx, timeout)
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

// now reads the clock.
func (c *call) now() time.Time {
	if c.clk == nil {
		return time.Now()
	}
	return c.clk.Now()
}

// since returns the time from epoch to now, or 0 when the clock was never
// read (the call ended before its first attempt).
func (c *call) since(epoch time.Time) time.Duration {
	if epoch.IsZero() {
		return 0
	}
	return max(c.now().Sub(epoch), 0)
}

// giveUp builds the error of a call that the policy ends after n attempts,
// since of them after the last start-over, for cause.
// now is when the policy decided to stop, if the clock was read for that
// decision: the call's elapsed time ends there, and a call stopped right at
// its first attempt's end reports 0.
func (c *call) giveUp(n, since int, last error, epoch, now time.Time, cause error, detail string) *Error {
	elapsed := time.Duration(0)
	switch {
	case epoch.IsZero():
	case now.IsZero():
		elapsed = c.since(epoch)
	default:
		elapsed = max(now.Sub(epoch), 0)
	}
	e := &Error{Attempts: n, Elapsed: elapsed, Last: last, Cause: cause, detail: detail}
	if c.loop {
		e.Attempts, e.total, e.loop = since, n, true
	}
	return e
}

// stopped builds the error for a call that ended because ctx is done, with
// cause = ctx.Err(). Only call it once Done is closed: some contexts read
// their error without a lock.
func (c *call) stopped(cause error, n, since int, last error, epoch time.Time) *Error {
	e := c.giveUp(n, since, last, epoch, time.Time{}, cause, "")
	if cc := context.Cause(c.ctx); cc != nil && cc != cause && cc != c.ctx.Err() {
		e.ctxCause = cc
	}
	return e
}

// finish tells the hooks how the call ended and returns err. epoch is
// where the call's elapsed time counts from (zero if the clock was never
// read).
func (c *call) finish(n int, err error, epoch time.Time) error {
	if c.hooks != nil && c.hooks.OnDone != nil {
		ev := DoneEvent{Attempts: n, Err: err}
		if err == nil {
			ev.Won = n
		}
		if h := c.hedge; h != nil {
			ev.Hedges = h.hedges
			if h.won > 0 { // a hedged round says which attempt won
				ev.Won = h.won
			}
		}
		if e, ok := err.(*Error); ok {
			ev.Elapsed = e.Elapsed
		} else {
			ev.Elapsed = c.since(epoch)
		}
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		c.hooks.OnDone(ctx, ev)
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
