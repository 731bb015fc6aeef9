package retry

import (
	"context"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// clock is a call's timekeeping: the policy's clock, where the call's
// elapsed time counts from, and the one timer a call on the real clock
// waits with. When [Error].Elapsed says a call reads no clock, timed is
// false and its elapsed time is 0.
type clock struct {
	clk      policy.Clock // nil: the real clock
	timed    bool         // the call counts its elapsed time
	epoch    time.Time    // where it counts from: the call's start (Loop: its current run of failures)
	runStart time.Time    // when the current attempt started, for the stable-run reset rule
	timer    *time.Timer  // the real clock's timer, made on the first wait
}

// start begins the call's time, if it is timed.
func (k *clock) start(timed bool) {
	k.timed = timed
	if timed {
		k.epoch = k.now()
	}
}

// now reads the clock.
func (k *clock) now() time.Time {
	if k.clk == nil {
		return time.Now()
	}
	return k.clk.Now()
}

// elapsed returns the call's elapsed time at now (read if zero), or 0 for a
// call that is not timed.
func (k *clock) elapsed(now time.Time) time.Duration {
	if !k.timed {
		return 0
	}
	if now.IsZero() {
		now = k.now()
	}
	return max(now.Sub(k.epoch), 0)
}

// restart makes elapsed times count from now: Loop's new run of failures.
func (k *clock) restart(now time.Time) {
	if k.timed {
		k.epoch = now
	}
}

// wait waits d, or until ctx is done, whichever comes first, and returns
// ctx's error in the second case. A zero d returns at once, with no timer.
// On the real clock it reuses one timer for the whole call.
func (k *clock) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	_, err := k.waitFor(ctx, d, nil)
	return err
}

// waitFor is wait that also ends when ch is closed, and then reports
// closed. A nil ch is never closed.
func (k *clock) waitFor(ctx context.Context, d time.Duration, ch <-chan struct{}) (closed bool, err error) {
	var fired <-chan time.Time
	switch {
	case k.clk != nil:
		fired = k.clk.After(d)
	case k.timer == nil:
		k.timer = time.NewTimer(d)
		fired = k.timer.C
	default:
		k.timer.Reset(d) // since Go 1.23 Reset leaves no stale tick behind
		fired = k.timer.C
	}
	select {
	case <-fired:
		return false, nil
	case <-ch:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// stop releases the timer.
func (k *clock) stop() {
	if k.timer != nil {
		k.timer.Stop()
	}
}
