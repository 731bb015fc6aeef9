package retry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
)

// maxHedgeInFlight is the largest policy.Hedging.MaxInFlight a valid policy
// has.
const maxHedgeInFlight = 10

// outcome is what one attempt of a round returned.
type outcome struct {
	i   int // the attempt's place in its round, from 1; 0: none
	v   any
	err error
}

// roundState is shared by a round and its attempts' goroutines. Once the
// round is over, an attempt that returns settles its own outcome instead of
// reporting it.
type roundState struct {
	mu       sync.Mutex
	over     bool
	ch       chan outcome               // buffered for every attempt of the round: a send never blocks
	hinted   atomic.Bool                // an attempt returned a hint, maybe not yet taken in: no hedge may start
	slow     [maxHedgeInFlight + 1]bool // attempts still running at a hedge delay
	admitted [maxHedgeInFlight + 1]bool // attempts the guard admitted: retries and hedges
}

// round is one round of hedged attempts, run on the call's goroutine.
type round struct {
	st       *roundState
	cancels  [maxHedgeInFlight + 1]context.CancelFunc
	limit    int // attempts the round may start
	started  int
	running  int
	reported [maxHedgeInFlight + 1]bool // attempts whose outcome has come in
	last     outcome                    // the latest failure, kept until a later outcome replaces it
	hinted   bool                       // last carries a hint (After)
	hedging  bool                       // more hedges may start
	delay    time.Duration              // the hedge delay fire was armed with
	fire     <-chan time.Time
	timer    *time.Timer
}

// round runs one round of hedged attempts and returns how many it started
// and the error of the attempt whose result it returns (nil: one
// succeeded).
func (c *call) round() (int, error) {
	limit := c.p.Hedging().MaxInFlight
	if limit == 0 {
		limit = 2
	}
	if max := c.p.MaxAttempts(); max > 0 {
		limit = min(limit, max-c.count)
	}
	if c.oneAttempt(nil) { // the request served is a retry already: no hedge
		limit = 1
	}
	r := &round{st: &roundState{ch: make(chan outcome, limit)}, limit: limit, hedging: limit > 1}
	r.st.admitted[1] = c.admitted
	r.start(c)
	for {
		r.arm(c)
		select {
		case o := <-r.st.ch:
			if o.err != nil && c.expired() {
				<-c.done // the attempt ended at the call's deadline, and the call's context is about to
			}
			if end, final := r.arrive(c, o); end {
				return r.end(c, final)
			}
			if c.stopping() != nil {
				return r.stopped(c)
			}
		case <-r.fire:
			r.hedge(c)
		case <-c.ctx.Done():
			return r.stopped(c)
		}
	}
}

// expired reports whether the call's deadline has passed on the policy's
// clock, as the deadline checks of the loop read it. The context's own
// timer may not have fired yet: an attempt's context, which ends at the
// same deadline, can be first.
func (c *call) expired() bool {
	return !c.deadline.IsZero() && !c.clock.now().Before(c.deadline)
}

// stopped ends the round when the call's context is done. It cancels the
// attempts still running and waits for them to return, as Do waits for its
// attempt, so that the round ends with what they return: the call keeps the
// latest error an attempt returned, never the previous round's.
func (r *round) stopped(c *call) (int, error) {
	r.stopTimer()
	r.hedging = false
	// An attempt's context ends at the call's deadline on its own: one that
	// passed is left to end it, so that the attempt sees DeadlineExceeded,
	// as the caller does, rather than Canceled.
	if !errors.Is(c.ctx.Err(), context.DeadlineExceeded) {
		for i := 1; i <= r.started; i++ {
			if !r.reported[i] {
				r.cancels[i]()
			}
		}
	}
	for {
		if end, final := r.arrive(c, <-r.st.ch); end {
			return r.end(c, final)
		}
	}
}

// start starts the round's next attempt on a goroutine of its own, with a
// context of its own, which carries its number (see Attempt). It keeps the
// call's values and ends at the call's deadline, but is not registered
// with the call's context. The round
// cancels its attempts itself, when the call's context ends or another
// attempt wins. The one whose value the call returns is left alone, and
// holds no reference to the caller's context.
func (r *round) start(c *call) {
	detached := context.WithoutCancel(c.ctx)
	var ctx context.Context
	var cancel context.CancelFunc
	if d, ok := c.ctx.Deadline(); ok {
		ctx, cancel = withDeadlineOn(c.p.Clock(), detached, d) // the policy's clock, which the caller's deadline may be on
	} else {
		ctx, cancel = context.WithCancel(detached)
	}
	r.started++
	r.running++
	r.cancels[r.started] = cancel
	ev := AttemptEvent{Attempt: c.attempts + r.started, Hedge: r.started > 1, Wait: r.delay}
	ctx = newNumbered(ctx, ev.Attempt)
	if r.started == 1 {
		ev.Wait = c.waited - c.waitedAt
	}
	var cs attemptCtxs
	if c.hooks.attempts {
		ctx = c.hooks.attempt(ctx, ev, &cs)
	}
	go c.hedge.runAttempt(ctx, r.st, r.started, ev, cs)
}

// arm sets the timer of the next hedge, if one may start.
func (r *round) arm(c *call) {
	if !r.hedging || r.fire != nil || r.started >= r.limit {
		return
	}
	d, ok := c.hedgeDelay()
	r.delay = d
	switch {
	case !ok:
		r.hedging = false
	case c.clock.clk != nil:
		r.fire = c.clock.clk.After(d)
	default:
		r.timer = time.NewTimer(d)
		r.fire = r.timer.C
	}
}

// hedge runs when the hedge delay has passed: the latest attempt is slow,
// and another starts beside it if the guard allows. None starts once an
// attempt of the round has returned a hint, even one whose outcome the
// round has not taken in yet.
func (r *round) hedge(c *call) {
	r.fire = nil
	if r.st.hinted.Load() { // the server asked for a pause, in an outcome still on its way
		r.hedging = false
		return
	}
	if !r.reported[r.started] {
		r.st.mu.Lock()
		r.st.slow[r.started] = true
		r.st.mu.Unlock()
	}
	if g := admission.Of(c.p); g != nil && !g.AllowHedge() {
		r.hedging = false
		return
	}
	r.st.admitted[r.started+1] = admission.Of(c.p) != nil
	c.hedge.hedges++
	r.start(c)
}

// arrive takes in the outcome of one of the round's attempts and reports
// whether the round ends, with which outcome.
func (r *round) arrive(c *call, o outcome) (bool, outcome) {
	r.running--
	r.reported[o.i] = true
	if o.err == nil || !c.failure(o.err) {
		return true, o
	}
	hinted := classify.Of(o.err).Hinted
	// The round's hint, from an attempt that failed earlier, goes through
	// the policy: a server's word is not lost for another attempt's failing
	// later. Nor is an earlier failure lost for an attempt that the call's
	// context cut off (see Error.Last).
	keepLast := r.last.i > 0 && (r.hinted && !hinted || c.cutOff(o.err))
	if r.running == 0 {
		if keepLast {
			r.settle(c, o)
			return true, r.last
		}
		return true, o
	}
	if hinted { // the server asked for a pause
		r.hedging = false
		r.stopTimer()
	}
	if keepLast {
		r.settle(c, o)
		return false, outcome{}
	}
	if r.last.i > 0 {
		r.settle(c, r.last)
	}
	r.last, r.hinted = o, hinted
	return false, outcome{}
}

// end ends the round with o: the other attempts are cancelled and settled,
// and o's value kept.
func (r *round) end(c *call, o outcome) (int, error) {
	r.stopTimer()
	h := c.hedge
	r.st.mu.Lock()
	r.st.over = true
	r.st.mu.Unlock()
	for i := 1; i <= r.started; i++ {
		if i != o.i || h.keep == nil {
			r.cancels[i]()
		}
	}
	if o.i > 0 && h.keep != nil {
		h.kept = r.cancels[o.i] // until the call waits for another round
	}
	for drained := false; !drained; {
		select {
		case x := <-r.st.ch:
			r.settle(c, x)
		default:
			drained = true
		}
	}
	if r.last.i > 0 && r.last.i != o.i {
		r.settle(c, r.last)
	}
	if o.i > 0 {
		r.record(c, o)
		if h.keep != nil {
			h.keep(o.v)
		}
	}
	if o.err == nil {
		h.won = c.attempts + o.i
	}
	return r.started, o.err
}

// settle tells the guard about an attempt the round does not return, and
// discards its value.
func (r *round) settle(c *call, o outcome) {
	r.record(c, o)
	if drop := c.hedge.drop; drop != nil {
		drop(o.v)
	}
}

// record tells the guard, if any, what an attempt that came in before the
// round ended said about the dependency.
func (r *round) record(c *call, o outcome) {
	g := admission.Of(c.p)
	if g == nil || c.stopping() != nil {
		return
	}
	r.st.mu.Lock()
	admitted, slow := r.st.admitted[o.i], r.st.slow[o.i]
	r.st.mu.Unlock()
	switch {
	case o.err == nil && slow:
		g.Record(admitted, admit.Slow)
	case o.err == nil:
		g.Record(admitted, admit.Succeeded)
	case c.failure(o.err):
		g.Record(admitted, classify.Of(o.err).Outcome)
	}
}

func (r *round) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.fire = nil
}

// runAttempt runs one attempt of a round on its own goroutine. An attempt
// that returns after its round is over is a loser: its value is discarded,
// and a success still tells the guard the dependency served it.
func (h *hedger) runAttempt(ctx context.Context, st *roundState, i int, ev AttemptEvent, cs attemptCtxs) {
	var begun time.Time
	if h.guard != nil || h.hooks.attempts {
		begun = h.clock.now()
	}
	var v any
	// The attempt's timeout ends with the context the round gave it: the
	// round cancels every attempt whose value the call does not return.
	_, err := once(ctx, &h.clock, h.timeout, func(ctx context.Context) error {
		var err error
		v, err = h.op(ctx)
		return err
	})
	if err != nil && classify.Of(err).Hinted {
		st.hinted.Store(true) // before anything else: a hedge about to start is held back
	}
	if err == nil && h.guard != nil {
		h.guard.Observe(h.clock.now().Sub(begun))
	}
	if h.hooks.attempts {
		ev.Err, ev.Duration = err, h.clock.now().Sub(begun)
		h.hooks.attemptDone(&cs, ev)
	}
	st.mu.Lock()
	if !st.over {
		st.ch <- outcome{i: i, v: v, err: err}
		st.mu.Unlock()
		return
	}
	admitted, slow := st.admitted[i], st.slow[i]
	st.mu.Unlock()
	switch {
	case h.guard == nil:
	case err == nil && slow:
		h.guard.Record(admitted, admit.Slow)
	case err == nil:
		h.guard.Record(admitted, admit.Succeeded)
	}
	if h.drop != nil {
		h.drop(v)
	}
}

// failure reports whether err is a failure the policy retries.
func (c *call) failure(err error) bool {
	return !classify.Of(err).Permanent && c.p.Retryable(err)
}

// hedgeDelay returns the delay before the next hedge, and false when none
// should start: the policy says none now, or it would start after ctx's
// deadline or past the time limit.
func (c *call) hedgeDelay() (time.Duration, bool) {
	h := c.p.Hedging()
	d, ok := h.Delay, h.Delay > 0
	if h.Quantile != 0 {
		if est, ready := c.hedge.guard.Latency(h.Quantile); ready {
			d, ok = est, true
		}
	}
	if !ok {
		return 0, false
	}
	deadline, hasDeadline := c.deadline, !c.deadline.IsZero()
	if !hasDeadline && c.p.MaxElapsed() == 0 {
		return d, true
	}
	now := c.clock.now()
	if hasDeadline && !now.Add(d).Before(deadline) {
		return 0, false
	}
	if c.p.MaxElapsed() > 0 && d > c.p.MaxElapsed()-c.clock.elapsed(now) {
		return 0, false
	}
	return d, true
}
