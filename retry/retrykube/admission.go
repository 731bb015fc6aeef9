package retrykube

import (
	"math/rand/v2"
	"time"
)

// admission is the seam where the policy's storm guard plugs in: the limiter
// tells it how each reconcile of an item ended and asks it before each
// requeue whether a retry may go ahead at the item's own back-off delay.
//
// NOT WIRED YET: policy.Guard has no public Allow and Record (and Policy no
// getter for its guard) on this branch's base. Once they exist, NewRateLimiter
// sets limiter.admit from the policy's guard and nothing else changes:
//
//	Allow(now) ⇔ (*policy.Guard).Allow(now)
//	Record(retry, failed) ⇔ (*policy.Guard).Record(retry, policy.Failed or policy.Succeeded)
type admission interface {
	Allow(now time.Time) bool
	Record(retry, failed bool)
}

// hold is how long a denied requeue waits at most: a workqueue runs an item
// whenever its delay ends, so "not now" has to be a delay, and a long one,
// since a dependency that fails for everyone rarely comes back within
// milliseconds. Denied items come back spread over the hold's second half,
// so that a recovery finds them neither all at once nor long after it.
const hold = time.Minute

// admitted records the failure that led to this requeue (the item's n-th in
// a row) and asks the admission whether the requeue may go ahead at its
// back-off delay; it returns the delay to wait instead when it may not.
// A retry is an item's reconcile after a failure.
func (l *limiter[T]) admitted(n int, now time.Time) (time.Duration, bool) {
	l.admit.Record(n > 1, true)
	if l.admit.Allow(now) {
		return 0, true
	}
	return hold/2 + rand.N(hold/2), false
}

// succeeded tells the admission about a success: the controller forgets an
// item once its reconcile succeeded (or once it gives the item up, which
// the limiter cannot tell apart).
func (l *limiter[T]) succeeded(item T) {
	l.admit.Record(l.table.Count(item, time.Now()) > 0, false)
}
