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

// admit asks the guard whether item's requeue, after the failure that led
// to it, may go ahead at its back-off delay d; it returns the delay to wait.
// An admitted requeue holds one of the guard's tokens until the item's next
// outcome, which l.tokens remembers; a denied one waits the hold, never
// less than d.
func (l *limiter[T]) admit(item T, d time.Duration, now time.Time) time.Duration {
	retry := l.tokens.Count(item, now) > 0
	l.guard.Record(retry, policy.Failed) // a controller's error says nothing of overload
	if l.guard.Allow(now) {
		l.tokens.Advance(item, now)
		return d
	}
	if retry {
		l.tokens.Forget(item)
	}
	return max(d, hold/2+rand.N(hold/2))
}

// succeeded tells the guard about a success: a controller forgets an item
// once its reconcile succeeded (or once it gives the item up, which the
// limiter cannot tell apart).
func (l *limiter[T]) succeeded(item T, now time.Time) {
	retry := l.tokens.Count(item, now) > 0
	l.guard.Record(retry, policy.Succeeded)
	if retry {
		l.tokens.Forget(item)
	}
}
