package retry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// timeouter is a clock that makes contexts which expire on it, as
// benbjohnson/clock's Mock does.
type timeouter interface {
	WithTimeout(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// attemptContext is the context of an attempt under the policy's attempt
// timeout. It answers as the context of context.WithDeadline would, from
// the start. It makes that context, and the timer that ends it, only when
// something first asks for its Done channel, or asks about it once it has
// ended. Until then neither a timer nor its parent refers to it. So a kept
// context that nothing watched is collected once dropped, however long
// its timeout.
type attemptContext struct {
	parent    context.Context
	deadline  time.Time    // the attempt's, or the parent's when it comes first
	own       bool         // the deadline is the attempt's own: it comes before the parent's
	clk       policy.Clock // the policy's clock, when contexts expire on it (a timeouter); nil: the real clock
	made      atomic.Bool
	cancelled atomic.Bool // cancel was called
	mu        sync.Mutex  // held while ctx is made
	ctx       context.Context
	stop      context.CancelFunc
}

// newAttemptContext returns the context of an attempt that starts now on
// k, under parent, and ends timeout later.
func newAttemptContext(parent context.Context, k *clock, timeout time.Duration) *attemptContext {
	a := &attemptContext{parent: parent}
	if _, ok := k.clk.(timeouter); ok {
		a.clk = k.clk
	}
	a.deadline, a.own = a.now().Add(timeout), true
	if d, ok := parent.Deadline(); ok && !d.After(a.deadline) {
		// The parent's deadline comes first: the context ends as its
		// parent does, never a moment before, so that the attempt is not
		// taken for one its own timeout cut off.
		a.deadline, a.own = d, false
	}
	if a.clk != nil {
		// A clock of one's own schedules its timeouts in order with its
		// other timers (a test's mock, a simulation's virtual clock): the
		// timeout is made as the attempt starts, before anything it waits
		// for, so that at a tie the timeout comes first, as it would on
		// the real clock.
		a.timed()
	}
	return a
}

func (a *attemptContext) Deadline() (time.Time, bool) { return a.deadline, true }

func (a *attemptContext) Done() <-chan struct{} { return a.timed().Done() }

func (a *attemptContext) Err() error {
	if !a.made.Load() && !a.ended() {
		return nil
	}
	return a.timed().Err()
}

// Value answers from the context made, once there is one: a context
// derived from this one then registers with it, as with any context of the
// context package, rather than on a goroutine of its own.
func (a *attemptContext) Value(key any) any {
	if a.made.Load() {
		return a.ctx.Value(key)
	}
	return a.parent.Value(key)
}

// cancel ends the context, and its timer if it has one.
func (a *attemptContext) cancel() {
	a.cancelled.Store(true)
	if a.made.Load() {
		a.stop()
	}
}

// ended reports whether the context has ended, before its timer is made:
// cancelled, its parent done, or its deadline passed.
func (a *attemptContext) ended() bool {
	if a.cancelled.Load() || done(a.parent) != nil {
		return true
	}
	return a.own && !a.now().Before(a.deadline)
}

// now reads the clock the deadline is on.
func (a *attemptContext) now() time.Time {
	if a.clk == nil {
		return time.Now()
	}
	return a.clk.Now()
}

// timed returns the context that ends at the deadline, made on the first
// call.
func (a *attemptContext) timed() context.Context {
	if a.made.Load() {
		return a.ctx
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.made.Load() {
		if a.own {
			a.ctx, a.stop = withDeadlineOn(a.clk, a.parent, a.deadline)
		} else {
			a.ctx, a.stop = context.WithCancel(a.parent)
		}
		a.made.Store(true)
		if a.cancelled.Load() {
			a.stop()
		}
	}
	return a.ctx
}

// withDeadlineOn returns a context of parent that ends at deadline on clk,
// when clk makes contexts that expire on it (a timeouter), and on the real
// clock otherwise.
func withDeadlineOn(clk policy.Clock, parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if wt, ok := clk.(timeouter); ok {
		return wt.WithTimeout(parent, deadline.Sub(clk.Now()))
	}
	return context.WithDeadline(parent, deadline)
}
