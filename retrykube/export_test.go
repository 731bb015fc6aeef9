package retrykube

import "k8s.io/client-go/util/workqueue"

// Items returns how many items rl, a limiter NewRateLimiter built, keeps
// state for: the keys of its table, its only per-item structure. A table
// whose keys are all forgotten holds no map at all (backoff.Keyed.Forget),
// so at 0 the limiter is back to its starting size.
func Items[T comparable](rl workqueue.TypedRateLimiter[T]) int {
	return rl.(*limiter[T]).table.Len()
}
