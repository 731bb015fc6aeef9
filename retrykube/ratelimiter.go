package retrykube

import (
	"fmt"
	"math"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

// NewRateLimiter returns a workqueue rate limiter that requeues an item
// after p's delay for the item's failures in a row. When(item) counts a
// failure and returns p.Backoff(n, …) for the item's n-th failure in a row.
// That delay is jittered and capped as every delay of p is. Forget(item)
// starts the item over. NumRequeues(item) returns its failures in a row.
//
// Memory stays bounded whether or not the controller calls Forget. An item
// starts over and gives its memory back once it is forgotten. It does the
// same once it has not been requeued for longer than the idle window, which
// is twice the policy's cap unless [WithIdle] says otherwise. Once every
// item is forgotten, the limiter is back to its starting size. The table is
// a [backoff.Keyed], which never sweeps: later calls let go of idle items.
//
// Each limiter has a guard against requeue storms: the guard in p, or else
// one of its own, policy.NewGuard(50, 1). docs/admission.md says why. Give
// every controller that calls the same dependency the same guard, through
// the policy. The limiter tells the guard how each reconcile ended. An item's first failure in a row is a first try's,
// because no requeue ran that reconcile. The guard counts it as a first try
// that failed fast, which takes half the ratio: half a token for the
// limiter's own guard. It counts each later failure in a row as a retry
// that failed fast, which takes one token. So with its own guard and no
// success between them, the first requeues of 99 objects go ahead at their
// delays, and the 100th object's is denied. The guard counts each
// Forget as a first try that succeeded, which adds the ratio: one token for
// the limiter's own guard. A Forget that gives an item up counts the same,
// because the limiter cannot tell the two apart. The table in the
// policy.Guard doc gives these amounts. Before each requeue, the limiter
// asks the guard whether the requeue may go ahead at its back-off delay.
//
// A requeue the guard denies waits longer instead, never less than its own
// delay. The queue runs an item whenever its delay ends, so "not now" has
// to be a longer wait, and every item that comes back is reconciled again.
// While at most 100 objects are failing in a row, a denied requeue waits
// 2.5 to 5 s, so that the backlog of a blip is back within seconds of its
// end. Once more are failing, the dependency is down for many of them. A
// denied requeue then waits 30 s to a minute, so that the backlog waits
// through the outage instead of adding to it. The guard lets one probe
// through each second, and finds out that way when the dependency is back.
//
// The limiter reads p's clock for its idle window and its guard. That is
// the real clock unless Policy.WithClock says otherwise. It takes from p
// only its delays and its guard. Attempt and time limits, retried errors
// and reset rules are the controller's to apply, through NumRequeues and
// Forget.
//
// An invalid p cannot be returned as an error, because the limiter's
// signature is client-go's. It is reported instead, as client-go reports
// the errors it has no caller to return to: through
// k8s.io/apimachinery/pkg/util/runtime.HandleError, which logs it. The
// limiter reports it on every requeue, and each requeue waits 30 s to a
// minute, as one the guard denies in an outage. So a policy that cannot be
// read neither hammers the dependency nor stops the controller, and its
// error stays in the log for as long as it is in use. A typed nil clock
// (Policy.WithClock) is such a policy. Check a policy read from
// configuration with Policy.Validate before building the limiter, where
// the error can still be returned.
//
// The limiter paces each item on its own. client-go's default limiter also
// caps the overall requeue rate, with a token bucket. To have both, compose
// the two as client-go does:
//
//	workqueue.NewTypedMaxOfRateLimiter(
//		retrykube.NewRateLimiter[string](p),
//		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 100)},
//	)
//
// The limiter is safe for concurrent use. When does not allocate for an
// item it already holds.
func NewRateLimiter[T comparable](p policy.Policy, opts ...Option) workqueue.TypedRateLimiter[T] {
	var c config
	for _, opt := range opts {
		if opt != nil {
			c = opt(c)
		}
	}
	if err := p.Validate(); err != nil {
		return unusable[T](err)
	}
	steps := plain(p)
	idle := c.idle
	if !c.idleSet {
		idle = satDouble(steps.Delay(math.MaxInt))
	}
	p = admission.Guarded(p)
	return &limiter[T]{p: p, clock: p.Clock(), guard: admission.Of(p), steps: steps, table: backoff.NewKeyed[T](positions, idle)}
}

// positions is the schedule of the limiter's table: the identity, so that
// the table's Next returns an item's failures in a row as it counts one
// more, in one step under the table's lock. The delays are the policy's.
var positions = backoff.ScheduleFunc(func(n int) time.Duration { return time.Duration(n) })

// unusable returns the limiter of an invalid policy, whose error err is:
// every requeue reports err and waits the long hold (see NewRateLimiter).
// It counts an item's failures as any limiter does, on the real clock,
// since the policy's clock may be the reason it is invalid.
func unusable[T comparable](err error) *limiter[T] {
	return &limiter[T]{
		err:   fmt.Errorf("retrykube: the limiter's policy is unusable, so every requeue waits %v to %v: %w", longHold/2, longHold, err),
		steps: backoff.Constant(longHold),
		table: backoff.NewKeyed[T](positions, 2*longHold),
	}
}

// limiter is what NewRateLimiter returns.
type limiter[T comparable] struct {
	err   error // an invalid policy's error: see unusable
	p     policy.Policy
	clock policy.Clock      // nil: the real clock
	steps backoff.Schedule  // p's delays without jitter
	table *backoff.Keyed[T] // the items' failures in a row: see positions
	guard *admit.Guard      // nil: every requeue waits its back-off delay
}

// The limiter satisfies the workqueue's interface for every item type.
func _[T comparable]() workqueue.TypedRateLimiter[T] { return (*limiter[T])(nil) }

// When counts a failure of item and returns how long to wait before its
// next try.
func (l *limiter[T]) When(item T) time.Duration {
	now := l.now()
	n := int(l.table.Next(item, now))
	if l.err != nil {
		utilruntime.HandleError(l.err)
		return hold(longHold)
	}
	// The table keeps no drawn delay: decorrelated jitter, the one kind that
	// grows from the previous wait, is given the previous step's plain delay.
	var prev time.Duration
	if n > 1 {
		prev = l.steps.Delay(n - 1)
	}
	d := l.p.Backoff(n, prev)
	if l.guard != nil {
		d = l.admit(d, n, now)
	}
	return d
}

// Forget starts item over: its next failure waits the first delay.
func (l *limiter[T]) Forget(item T) {
	if l.guard != nil {
		l.succeeded()
	}
	l.table.Forget(item)
}

// NumRequeues returns item's failures in a row: 0 for an item never
// requeued, forgotten, or idle past the window.
func (l *limiter[T]) NumRequeues(item T) int { return l.table.Count(item, l.now()) }

func (l *limiter[T]) now() time.Time {
	if l.clock == nil {
		return time.Now()
	}
	return l.clock.Now()
}

// plain returns p's delays without jitter, a pure schedule.
func plain(p policy.Policy) backoff.Schedule {
	p = p.WithJitter(backoff.Jitter{})
	return backoff.ScheduleFunc(func(n int) time.Duration { return p.Backoff(n, 0) })
}

// satDouble returns 2d, or 0 (no idle window) when that would not fit: a
// policy with no cap has no window past which an item is surely idle.
func satDouble(d time.Duration) time.Duration {
	if d > math.MaxInt64/2 {
		return 0
	}
	return 2 * d
}
