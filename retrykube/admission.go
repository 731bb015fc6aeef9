package retrykube

import (
	"math/rand/v2"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// hold is how long a requeue the guard denies waits at most. A workqueue
// runs an item whenever its delay ends, so "not now" has to be a delay, and
// a long one, since a dependency that fails for everyone rarely comes back
// within milliseconds (the guard's probes find out when it does). Denied
// items come back spread over the hold's second half, so that a recovery
// finds them neither all at once nor long after it.
const hold = time.Minute

// admit tells the guard of the failure that led to a requeue, and asks it
// whether the requeue may go ahead at its back-off delay d; it returns the
// delay to wait. In a controller every failed reconcile is load that
// requeues make (an object's reconcile is run again and again, so there is
// no first try to set apart): each takes a token. A denied requeue waits
// the hold, never less than d.
func (l *limiter[T]) admit(d time.Duration, now time.Time) time.Duration {
	l.guard.Record(true, policy.Failed) // a controller's error says nothing of overload
	if l.guard.Allow(now) {
		return d
	}
	return max(d, hold/2+rand.N(hold/2))
}

// succeeded tells the guard about a success: a controller forgets an item
// once its reconcile succeeded (or once it gives the item up, which the
// limiter cannot tell apart).
func (l *limiter[T]) succeeded() {
	l.guard.Record(false, policy.Succeeded)
}
