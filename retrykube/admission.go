package retrykube

import (
	"math/rand/v2"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
)

// A workqueue runs an item whenever its delay ends, so a requeue the guard
// denies cannot be asked again later: "not now" has to be a delay, longer
// than the back-off's. Every time a held item comes back, it is reconciled,
// which is load on the dependency. Denied items come back spread over the
// second half of their hold, so that a recovery finds them neither all at
// once nor long after it.
const (
	// shortHold bounds the wait of a denied requeue while few objects fail:
	// the backlog of a blip comes back within seconds of its end.
	shortHold = 5 * time.Second
	// longHold bounds the wait of a denied requeue while many objects fail:
	// a dependency that fails for that many rarely comes back within
	// seconds, and the backlog sits out the outage rather than add to it.
	longHold = time.Minute
	// fewFailing is the most objects failing in a row for which a denied
	// requeue takes the short hold: the objects whose first failures, at
	// half a token each, spend the default guard.
	fewFailing = 2 * admission.Tokens
)

// admit tells the guard of the failure that led to a requeue, and asks it
// whether the requeue may go ahead at its back-off delay d; it returns the
// delay to wait. n is the item's failures in a row. The first is a first
// try's, since no requeue ran that reconcile, and takes half the ratio, as
// in retryriver. Each later one is a retry's and takes a token. Counting
// the first as a retry's would let the first failures of 50 objects spend
// the limiter's own guard and hold every other object's first requeue. A
// denied requeue waits the short or the long hold, never less than d.
func (l *limiter[T]) admit(d time.Duration, n int, now time.Time) time.Duration {
	l.guard.Record(n > 1, admit.Failed) // a controller's error says nothing of overload
	if l.guard.Allow(now) {
		return d
	}
	if l.table.Len() <= fewFailing {
		return max(d, hold(shortHold))
	}
	return max(d, hold(longHold))
}

// hold returns a wait drawn from the second half of h.
func hold(h time.Duration) time.Duration { return h/2 + rand.N(h/2) }

// succeeded tells the guard about a success: a controller forgets an item
// once its reconcile succeeded (or once it gives the item up, which the
// limiter cannot tell apart).
func (l *limiter[T]) succeeded() {
	l.guard.Record(false, admit.Succeeded)
}
