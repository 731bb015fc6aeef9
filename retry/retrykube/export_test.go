package retrykube

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Admission is the seam for the policy's guard, for tests to plug a stand-in
// into until the guard's Allow and Record exist.
type Admission interface {
	Allow(now time.Time) bool
	Record(retry, failed bool)
}

// WithAdmission returns rl, built by NewRateLimiter, asking a before each
// requeue.
func WithAdmission[T comparable](rl workqueue.TypedRateLimiter[T], a Admission) workqueue.TypedRateLimiter[T] {
	rl.(*limiter[T]).admit = a
	return rl
}
