package retry

import (
	"context"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/internal/served"
	"github.com/retrykit/retrykit/policy"
)

// loopMinPause is the shortest pause Loop makes between two runs.
const loopMinPause = 10 * time.Millisecond

// call is the state of one Do, DoValue, Loop or Hedge call. It lives on the
// stack of the function that runs the call, so nothing is shared between
// calls.
type call struct {
	ctx      context.Context
	done     <-chan struct{} // ctx.Done(): nil for a context that is never done
	deadline time.Time       // ctx's deadline, zero if none
	p        policy.Policy
	hooks    hookSet
	loop     bool // Loop: a success does not end the call
	clock    clock
	hedge    *hedger // the hedged rounds, for Hedge and HedgeValue

	attempts int                // attempts made, every hedge and every Loop run included
	count    int                // what the attempt limit counts: attempts (Do), failed runs in a row (Loop); denied retries too, in Do
	denied   bool               // the guard denied the latest retry
	denials  int                // retries the guard denied in all
	waited   time.Duration      // the waits made, added up
	waitedAt time.Duration      // waited when the latest attempt started
	told     RetryEvent         // the wait last announced to the hooks
	keep     bool               // DoValue: the last attempt's value is returned, its context kept
	release  context.CancelFunc // ends the timeout of the attempt whose value the call holds
	pos      int                // the schedule's position: waits since the last start-over
	prev     time.Duration      // the last wait
	lastFail time.Time          // when the previous attempt failed, for the idle reset rule
	admitted bool               // the attempt just made was a retry the guard admitted
	started  bool               // the reset rule started the back-off over before this wait
	verdict  classify.Verdict   // what the last attempt's error says to the loop
	served   *served.Record     // the record of the request that ctx serves, if any
	mixed    bool               // an attempt failed without showing overload
	entered  bool               // the guard counts the next attempt as running already (Guard.Enter)
	nested   bool               // ctx carries another call's attempt number
	mark     *numbered          // the context that carries the attempt number, made at the first attempt that needs it
}

// init sets up a call, or returns the error that refuses it before
// anything runs (told to the hooks as the call's end): bad, a nil ctx, an
// invalid policy, a ctx that is done already.
func (c *call) init(ctx context.Context, p policy.Policy, hooks *hookSet, loop bool, bad error) error {
	c.ctx, c.p, c.hooks, c.loop = ctx, p, *hooks, loop
	c.clock.clk = c.p.Clock()
	switch {
	case bad != nil:
		return c.finish(bad)
	case ctx == nil:
		return c.finish(errNilContext)
	}
	c.done = ctx.Done()
	c.deadline, _ = ctx.Deadline()
	c.served = served.From(ctx)
	c.nested = carriesAttempt(ctx)
	if err := p.Validate(); err != nil {
		return c.finish(err)
	}
	c.clock.start(c.timed())
	if err := done(ctx); err != nil {
		return c.finish(c.stopped(err, nil))
	}
	return nil
}

// timed reports whether something needs the call's start: a deadline, a
// time limit, hooks, a stable-run reset rule, or Loop's runs of failures.
// Other calls read the clock only where a wait or the guard needs it, and
// report an Elapsed of 0.
func (c *call) timed() bool {
	return !c.deadline.IsZero() || c.p.MaxElapsed() > 0 || c.hooks.n > 0 || c.p.ResetRule().AfterStableRun > 0 || c.loop
}

// run is the retry loop, in the order the package doc states: make an
// attempt; end on success, a Permanent error or one the policy does not
// retry; account for the outcome; work out the next wait; end if a limit
// says so; wait; ask the guard; go again. The call waits for a retry the
// guard denies as if it had failed, and asks again after the next wait.
// The guard is asked after the wait, not before: when the retry would
// start, with what the guard has learnt meanwhile.
//
// fn is the operation, nil for a hedged call. It is passed down rather than
// kept in the call, so that the closure DoValue makes stays on its stack.
func (c *call) run(fn func(context.Context) error) error {
	if g := admission.Of(c.p); g != nil {
		g.Start()
		defer g.Done()
		if err := c.enter(g); err != nil {
			return c.finish(err)
		}
		c.entered = true
	}
	return c.runFrom(fn, c.attempt(fn, false))
}

// runFrom is run after the first attempt, which returned err.
func (c *call) runFrom(fn func(context.Context) error, err error) error {
	defer c.clock.stop()
	fresh := true
	var prev error // the error of the attempt before err's
	for {
		if fresh {
			if end, final := c.outcome(err); end {
				return c.finish(final)
			}
		}
		if ctxErr := c.stopping(); ctxErr != nil {
			if c.cutOff(err) && prev != nil {
				err = prev // the attempt says nothing the one before it did not
			} else if pe, ok := err.(*classify.Permanent); ok {
				err = pe.Err // as a call that ends on it returns it: without the mark
			}
			return c.finish(c.stopped(ctxErr, err))
		}
		d, hinted := c.nextWait(err)
		if e := c.limits(err, d, hinted); e != nil {
			return c.finish(e)
		}
		if c.starved(err) {
			return c.finish(c.giveUp(err, ErrThrottled, "the guard has no token left, and the request served asks its caller not to retry"))
		}
		c.drop()
		c.tell(err, d, hinted)
		waited, ctxErr := c.backOff(d, hinted)
		if ctxErr != nil {
			return c.finish(c.stopped(ctxErr, err))
		}
		c.prev, c.waited = d, c.waited+waited
		if fresh = c.admit(err); fresh {
			prev = err
			err = c.attempt(fn, err != nil) // Loop's run after a success is no retry
			continue
		}
		c.hooks.denied(c.ctx, c.told)
		if c.lastChance() {
			return c.finish(c.giveUp(err, ErrThrottled, "the guard denied the retry"))
		}
		if !c.loop {
			c.count++ // a denied retry uses up the attempt it replaced
		}
	}
}

// attempt makes the next attempt, or the next round of hedged attempts,
// and counts it. admitted says whether the guard admitted it as a retry.
func (c *call) attempt(fn func(context.Context) error, admitted bool) error {
	if c.p.ResetRule().AfterStableRun > 0 {
		c.clock.runStart = c.clock.now()
	}
	c.admitted = admitted
	if g := admission.Of(c.p); g != nil {
		if !c.entered {
			g.Run()
		}
		c.entered = false
		defer g.Leave()
	}
	n, err := 1, error(nil)
	if c.hedge != nil {
		n, err = c.round()
	} else {
		err = c.once(fn)
	}
	c.attempts += n
	c.count += n
	c.waitedAt = c.waited
	return err
}

// once makes one attempt of a call that does not hedge, and tells the
// hooks of it.
func (c *call) once(fn func(context.Context) error) error {
	ctx := c.numberedContext(c.attempts + 1)
	if !c.hooks.attempts {
		cancel, err := once(ctx, &c.clock, c.p.AttemptTimeout(), fn)
		c.hold(cancel)
		return err
	}
	ev := AttemptEvent{Attempt: c.attempts + 1, Wait: c.waited - c.waitedAt}
	var cs attemptCtxs
	ctx = c.hooks.attempt(ctx, ev, &cs)
	begun := c.clock.now()
	cancel, err := once(ctx, &c.clock, c.p.AttemptTimeout(), fn)
	ev.Err, ev.Duration = err, c.clock.now().Sub(begun)
	c.hold(cancel)
	c.hooks.attemptDone(&cs, ev)
	return err
}

// once runs fn with ctx, under the policy's per-attempt timeout if it has
// one. It returns fn's error, and the cancel of the attempt's timeout (nil
// without one): the caller says when the attempt's context ends. The
// timeout's timer is made only once something watches the attempt's
// context (see attemptContext).
func once(ctx context.Context, k *clock, timeout time.Duration, fn func(context.Context) error) (context.CancelFunc, error) {
	if timeout <= 0 {
		return nil, fn(ctx)
	}
	actx := newAttemptContext(ctx, k, timeout)
	err := fn(actx)
	if err != nil && actx.Err() != nil && done(ctx) == nil {
		err = &attemptTimeoutError{timeout: timeout, err: err}
	}
	return actx.cancel, err
}

// hold keeps the attempt's timeout, whose cancel is given, until the call
// waits after the attempt. The context of the attempt whose value DoValue
// returns so stays alive until its own timeout, or until the caller's
// context ends. It holds a timer only if something watched it (see
// attemptContext). Do and Loop return no value: the timeout ends at once.
func (c *call) hold(cancel context.CancelFunc) {
	switch {
	case cancel == nil:
	case c.keep:
		c.release = cancel
	default:
		cancel()
	}
}

// drop ends the context of the attempt whose value the call holds, as the
// call goes on to wait for a retry: that value is dropped.
func (c *call) drop() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
	if h := c.hedge; h != nil && h.kept != nil {
		h.kept()
		h.kept = nil
	}
}

// finish tells the hooks how the call ended and returns err.
func (c *call) finish(err error) error {
	c.tellServed(err)
	if c.hooks.n == 0 {
		return err
	}
	ev := DoneEvent{Attempts: c.attempts, Err: err, Waited: c.waited, Denied: c.denials}
	if err == nil {
		ev.Won = c.attempts
	}
	if h := c.hedge; h != nil {
		ev.Hedges = h.hedges
		if h.won > 0 {
			ev.Won = h.won
		}
	}
	if e, ok := err.(*Error); ok {
		ev.Elapsed = e.Elapsed
	} else {
		ev.Elapsed = c.clock.elapsed(time.Time{})
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	c.hooks.done(ctx, ev)
	return err
}

// stopping returns the call's context's error if it is done.
func (c *call) stopping() error {
	if c.done == nil {
		return nil
	}
	return done(c.ctx)
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
