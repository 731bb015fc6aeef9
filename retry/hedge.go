package retry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
	"github.com/retrykit/retrykit/policy"
)

var errNoHedge = fmt.Errorf("retry: Hedge given a policy without hedging (policy.Policy.WithHedge): %w", ErrInvalid)

// Hedge is [Do] for an operation that is safe to run more than once at the
// same time (a read, an idempotent write): besides retrying failures as Do
// does, it starts another attempt beside one that is slow to return, as the
// policy's hedging says (policy.Policy.WithHedge). Do and DoValue never
// hedge, whatever the policy: only the caller knows whether an operation may
// run twice at once, so it says so by calling Hedge.
//
// Each round of attempts starts one at once and, while none has succeeded,
// another after each hedge delay, up to the hedge's MaxInFlight side by
// side. The first success wins: the call returns at once and the other
// attempts' contexts are cancelled (Hedge does not wait for them to return).
// A failure does not end the round while other attempts of it still run;
// when every attempt of the round has failed, the error of the last one to
// fail (or of one that carried a hint) goes through the policy as Do's would (a back-off wait, then a new
// round, or the end of the call). A [Permanent] error or one the policy does
// not retry ends the call at once, cancelling the others: the operation
// itself was refused, and its copies would be too. An error hinted with
// [After] starts no further hedge in its round.
//
// Every hedge counts as an attempt for the policy's attempt limit and as a
// retry for its budget and guard: no hedge is started that they deny. An
// attempt still running at the hedge delay counts as failed for the guard,
// once, whether or not a hedge may start beside it, and its success, should
// it come, puts nothing back: when the dependency slows down as a whole the
// guard closes and stops the hedges (and retries) rather than let them
// double its load. When every attempt of a round has failed, a server's
// hint ([After]) from any of them sets the wait before the next round. No hedge is started whose delay
// would end after ctx's deadline or, from the second round on, past the
// policy's time limit. The hedge delay is not jittered; the back-off between
// rounds is jittered as the policy says. With a policy.Latency, the latency
// of every successful attempt, measured on the policy's clock, is given to
// it.
//
// fn must be safe for concurrent use. Hedge returns what Do returns; a call
// under a policy without hedging is an error matching [ErrInvalid], and so
// is a [DiscardValue] option (see [HedgeValue]). Hedge costs goroutines and
// allocations that Do does not: each attempt runs on a goroutine of its own,
// with a context of its own.
func Hedge(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	o := collect(opts)
	c := call{ctx: ctx, p: p, s: plumb.Of(&p), hooks: o.hooks}
	switch {
	case fn == nil:
		return c.finish(0, errNilFunction, time.Time{})
	case o.discard != nil:
		return c.finish(0, errDiscardType, time.Time{})
	case p.Validate() == nil && c.s.Hedge == nil:
		return c.finish(0, errNoHedge, time.Time{})
	}
	c.hedge = newHedger(p, func(ctx context.Context) (any, error) { return nil, fn(ctx) })
	if err := c.begin(); err != nil {
		return err
	}
	return c.run(nil, nil, 0)
}

// HedgeValue is [Hedge] for an operation that returns a value, as [DoValue]
// is for Do. It returns the value of the attempt that won, or on failure that
// of the attempt whose error it returns. That attempt's context is not
// cancelled, so that a value bound to it stays usable (an HTTP response's
// body is read after the call): it ends with ctx, and holds nothing when ctx
// can never be cancelled; give HedgeValue a ctx that ends, such as a
// request's, rather than a long-lived cancellable one. The values of the
// other attempts are discarded: give [DiscardValue] a cleanup for values
// that own a resource (an *http.Response and its body), and it gets every
// one of them, including those of losing attempts that return after the
// call has.
func HedgeValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts ...Option) (T, error) {
	var v T
	c, discard, err := valueCall(ctx, fn, p, opts)
	if err != nil {
		return v, err
	}
	if p.Validate() == nil && c.s.Hedge == nil {
		return v, c.finish(0, errNoHedge, time.Time{})
	}
	h := newHedger(p, func(ctx context.Context) (any, error) { return fn(ctx) })
	// A round hands the value it returns to keep; the one a later round
	// replaces is discarded then.
	kept := false
	h.keep = func(a any) {
		if kept && discard != nil {
			discard(v)
		}
		kept = true
		var w T
		if a != nil {
			w = a.(T)
		}
		v = w
	}
	if discard != nil {
		h.drop = func(a any) {
			var w T
			if a != nil {
				w = a.(T)
			}
			discard(w)
		}
	}
	c.hedge = h
	if err := c.begin(); err != nil {
		return v, err
	}
	err = c.run(nil, nil, 0)
	return v, err
}

// maxHedgeInFlight is the largest policy.Hedge.MaxInFlight a valid policy
// has.
const maxHedgeInFlight = 10

// hedger is what the attempts of a hedged call share. The attempts' own
// goroutines use it, never the call, which stays on its caller's stack.
type hedger struct {
	h          policy.Hedge
	clk        plumb.Clock
	guard      any // a *policy.Guard, or nil
	budget     any // a *policy.Budget, or nil
	timeout    time.Duration
	maxElapsed time.Duration
	op         func(context.Context) (any, error)
	keep       func(any) // the value of the attempt a round's error or success belongs to
	drop       func(any) // a value the call does not return; nil: nothing to clean up

	// Written by the call's goroutine only.
	hedges   int       // hedges started so far
	won      int       // the attempt whose success ended the call
	prevErr  error     // the error the last round ended with
	charged  bool      // the attempt whose result the last round returned was already counted as failed
	firstEnd time.Time // when the call's first attempt to return returned: where its elapsed time counts from
}

func newHedger(p policy.Policy, op func(context.Context) (any, error)) *hedger {
	s := plumb.Of(&p)
	h, _ := s.Hedge.(policy.Hedge)
	return &hedger{h: h, clk: s.Clock, guard: s.Guard, budget: s.Budget, timeout: s.AttemptTimeout, maxElapsed: s.MaxElapsed, op: op}
}

func (h *hedger) now() time.Time {
	if h.clk == nil {
		return time.Now()
	}
	return h.clk.Now()
}

// outcome is what one attempt of a round returned.
type outcome struct {
	i   int // the attempt's place in its round, from 1
	v   any
	err error
}

// roundState is shared by a round and its attempts. Once over, an attempt
// that returns settles its own outcome instead of reporting it.
type roundState struct {
	mu      sync.Mutex
	over    bool
	ch      chan outcome               // buffered for every attempt of the round: a send never blocks
	charged [maxHedgeInFlight + 1]bool // attempts the guard already counted as failed, for being slow
}

// attempt runs one attempt of a round on its own goroutine.
func (h *hedger) attempt(ctx context.Context, r *roundState, i int) {
	var start time.Time
	if h.h.Latency != nil {
		start = h.now()
	}
	v, err := h.try(ctx)
	if err == nil && h.h.Latency != nil {
		plumb.LatencyObserve(h.h.Latency, h.now().Sub(start))
	}
	r.mu.Lock()
	if !r.over {
		r.ch <- outcome{i: i, v: v, err: err}
		r.mu.Unlock()
		return
	}
	charged := r.charged[i]
	r.mu.Unlock()
	// A loser. Its failure is most likely the cancellation, no news about
	// the dependency; its success is, unless it was counted as slow.
	if err == nil && h.guard != nil && !charged {
		plumb.GuardSuccess(h.guard)
	}
	if h.drop != nil {
		h.drop(v)
	}
}

// try runs the operation once under the policy's per-attempt timeout.
func (h *hedger) try(ctx context.Context) (any, error) {
	if h.timeout <= 0 {
		return h.op(ctx)
	}
	actx, cancel := withTimeout(h.clk, ctx, h.timeout)
	defer cancel()
	v, err := h.op(actx)
	if err != nil && done(actx) != nil && done(ctx) == nil {
		err = &attemptTimeoutError{timeout: h.timeout, err: err}
	}
	return v, err
}

// settle tells the guard about an attempt the round does not return and
// discards its value. Only an attempt that ended before the round did is
// settled here, so its outcome is real. An attempt the guard already counted
// as failed for being slow is not counted again.
func (c *call) settle(r *roundState, o outcome) {
	h := c.hedge
	r.mu.Lock()
	charged := r.charged[o.i]
	r.mu.Unlock()
	if h.guard != nil && !charged {
		switch {
		case o.err == nil:
			plumb.GuardSuccess(h.guard)
		case c.failure(o.err):
			plumb.GuardFailure(h.guard)
		}
	}
	if h.drop != nil {
		h.drop(o.v)
	}
}

// failure reports whether err is a failure the policy retries.
func (c *call) failure(err error) bool {
	return !inspect(err).permanent && c.p.Retryable(err)
}

// round runs one round of hedged attempts, made attempts into the call, at
// most left of them (left ≤ 0: no limit), and returns how many it started
// and the error of the attempt whose result it returns (nil: one succeeded).
// epoch is where the call's time limit counts from, zero in the first round.
func (c *call) round(made, left int, epoch time.Time) (int, error) {
	h := c.hedge
	limit := h.h.MaxInFlight
	if limit == 0 {
		limit = 2
	}
	if left > 0 {
		limit = min(limit, left)
	}
	r := &roundState{ch: make(chan outcome, limit)}
	// Each attempt has a context of its own, so that the losers can be
	// cancelled and the attempt whose value the call returns left alone.
	var cancels [maxHedgeInFlight + 1]context.CancelFunc
	ctx, cancel := context.WithCancel(c.ctx)
	cancels[1] = cancel
	started, running := 1, 1
	go h.attempt(ctx, r, 1)

	var (
		last       outcome // the latest failure, kept until a later outcome replaces it
		failed     bool
		lastHinted bool                       // last carries a hint (After)
		reported   [maxHedgeInFlight + 1]bool // attempts whose outcome has come in
		fire       <-chan time.Time
		timer      *time.Timer
		hedging    = limit > 1
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
		}
		fire = nil
	}
	end := func(o outcome) (int, error) {
		stopTimer()
		r.mu.Lock()
		r.over = true
		r.mu.Unlock()
		for i := 1; i <= started; i++ {
			if i != o.i || h.keep == nil {
				cancels[i]()
			}
		}
		for {
			select {
			case x := <-r.ch:
				c.settle(r, x)
				continue
			default:
			}
			break
		}
		if failed && last.i != o.i {
			c.settle(r, last)
		}
		if o.i > 0 && h.keep != nil {
			h.keep(o.v)
		}
		if o.err == nil {
			h.won = made + o.i
		}
		r.mu.Lock()
		h.charged = o.i > 0 && r.charged[o.i]
		r.mu.Unlock()
		h.prevErr = o.err
		return started, o.err
	}
	for {
		if hedging && fire == nil && started < limit {
			d, ok := c.hedgeDelay(epoch)
			switch {
			case !ok:
				hedging = false
			case c.clk != nil:
				fire = c.clk.After(d)
			default:
				timer = time.NewTimer(d)
				fire = timer.C
			}
		}
		select {
		case o := <-r.ch:
			running--
			reported[o.i] = true
			if made == 0 && h.firstEnd.IsZero() {
				h.firstEnd = c.now()
			}
			hinted := o.err != nil && inspect(o.err).hinted
			if o.err == nil || !c.failure(o.err) {
				return end(o)
			}
			if running == 0 {
				if failed && lastHinted && !hinted {
					// The round's hint, from an attempt that failed
					// earlier, goes through the policy: a server's word
					// is not lost for another attempt's failing later.
					c.settle(r, o)
					return end(last)
				}
				return end(o)
			}
			if hinted { // the server asked for a pause
				hedging = false
				stopTimer()
			}
			if failed && lastHinted && !hinted {
				c.settle(r, o) // keep the hinted failure as the round's
				continue
			}
			if failed {
				c.settle(r, last)
			}
			last, failed, lastHinted = o, true, hinted
		case <-fire:
			fire = nil
			allowed := c.allowHedge()
			if !reported[started] {
				// The latest attempt has outlasted the hedge delay: slow,
				// whether or not a hedge may start beside it. The guard
				// counts it as failed, once, and its success, should it
				// come, puts nothing back: a dependency that slows down
				// as a whole closes the guard and stops the hedges.
				r.mu.Lock()
				r.charged[started] = true
				r.mu.Unlock()
				if h.guard != nil {
					plumb.GuardFailure(h.guard)
				}
			}
			if !allowed {
				hedging = false
				continue
			}
			started++
			running++
			h.hedges++
			ctx, cancel := context.WithCancel(c.ctx)
			cancels[started] = cancel
			go h.attempt(ctx, r, started)
		case <-c.ctx.Done():
			if !failed { // the call keeps the error and value of the previous round, if any
				last = outcome{err: h.prevErr}
				if last.err == nil {
					last.err = c.ctx.Err()
				}
			}
			return end(last)
		}
	}
}

// hedgeDelay returns the delay before the next hedge, and false when none
// should start: the policy says none now, or it would start after ctx's
// deadline or past the time limit.
func (c *call) hedgeDelay(epoch time.Time) (time.Duration, bool) {
	h := c.hedge.h
	d, ok := h.Delay, h.Delay > 0
	if h.Latency != nil {
		if est, ready := h.Latency.Estimate(); ready {
			d, ok = est, true
		}
	}
	if !ok {
		return 0, false
	}
	deadline, hasDeadline := c.ctx.Deadline()
	maxElapsed := c.hedge.maxElapsed
	if hasDeadline || (maxElapsed > 0 && !epoch.IsZero()) {
		now := c.now()
		if hasDeadline && !now.Add(d).Before(deadline) {
			return 0, false
		}
		if maxElapsed > 0 && !epoch.IsZero() && d > maxElapsed-max(now.Sub(epoch), 0) {
			return 0, false
		}
	}
	return d, true
}

// allowHedge asks the guard and the budget for a hedge, as for a retry.
func (c *call) allowHedge() bool {
	h := c.hedge
	if h.guard != nil && !plumb.GuardAllowRetry(h.guard) {
		return false
	}
	// The budget is asked second, as for a retry, so that a hedge the guard
	// denies spends nothing.
	return h.budget == nil || plumb.BudgetTryRetry(h.budget, c.now())
}
