package retry

import (
	"errors"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/admit"
)

// probeEvery is how often a call waiting for its turn at the guard asks to
// go as the guard's probe.
const probeEvery = time.Second

// errHeld stands for the attempt that a call waiting for its turn has not
// made, for the limits, which end a call only after a failure.
var errHeld = errors.New("retry: held back")

// enter waits until the guard lets the call's first attempt start, by the
// rule of policy.Guard ("New calls wait their turn"). It returns the error
// that ends the call when a limit or ctx ends the wait. Its first wait is
// made even when the attempt limit leaves none. A Loop waits for as long as
// ctx allows.
func (c *call) enter(g *admit.Guard) error {
	t := g.Enter()
	if t == nil {
		return nil
	}
	for waits := 0; !g.Probe(t, c.clock.now()); waits++ {
		// Every call waits once, even one of a single attempt: a waiting
		// call never fails at once.
		if !c.loop && waits > 0 && c.p.MaxAttempts() > 0 && c.count+1 >= c.p.MaxAttempts() {
			g.Abandon(t)
			return c.shed(c.giveUp(nil, ErrShed, ""))
		}
		d, _ := c.nextWait(nil)
		d = max(d, loopMinPause) // a zero delay must not spin while held
		var last *Error          // the limit that ends the call after this wait
		if e := c.limits(errHeld, d, false); e != nil && !c.loop {
			left := c.left()
			if waits > 0 || left <= 0 {
				g.Abandon(t)
				return c.shed(e)
			}
			d, last = min(d, left), e // the first wait lasts up to the limit: a turn may come before it
		}
		began := c.clock.now()
		turned, err := c.waitTurn(d, g, t)
		if err != nil {
			g.Abandon(t)
			return c.shed(c.stopped(err, nil))
		}
		waited := d
		if turned { // the turn may have come before the wait's end
			waited = min(max(c.clock.now().Sub(began), 0), d)
		}
		c.prev, c.waited = d, c.waited+waited
		if !c.loop {
			c.count++
		}
		if turned {
			break
		}
		if last != nil {
			g.Abandon(t)
			last.Elapsed = c.clock.elapsed(time.Time{}) // built before the wait
			return c.shed(last)
		}
	}
	return nil
}

// left returns the time left before the call's deadline or time limit,
// whichever comes first, or the longest duration when it has neither.
func (c *call) left() time.Duration {
	now, left := c.clock.now(), time.Duration(math.MaxInt64)
	if !c.deadline.IsZero() {
		left = c.deadline.Sub(now)
	}
	if m := c.p.MaxElapsed(); m > 0 {
		left = min(left, m-c.clock.elapsed(now))
	}
	return left
}

// waitTurn waits d, or until the call's turn comes (t's channel is closed)
// or ctx ends, waking a second apart to ask to go as the guard's probe. It
// reports whether the call may start its first attempt.
func (c *call) waitTurn(d time.Duration, g *admit.Guard, t *admit.Turn) (turned bool, err error) {
	for d > 0 {
		step := min(d, probeEvery)
		if turned, err = c.clock.waitFor(c.ctx, step, t.C); turned || err != nil {
			return turned, err
		}
		if d -= step; d > 0 && g.Probe(t, c.clock.now()) {
			return true, nil
		}
	}
	return false, nil
}

// shed makes e, the error of a call that ended while waiting its turn, match
// ErrShed, with no last error: the operation never ran.
func (c *call) shed(e *Error) *Error {
	e.Last = nil
	if errors.Is(e.Cause, ErrExhausted) || e.Cause == ErrShed { // a limit ended the wait
		e.Cause = ErrShed
	} else { // the caller's context did
		e.also = ErrShed
	}
	e.detail = "the guard held the first attempt back"
	return e
}
