package retrykube

import (
	"time"

	"github.com/retrykit/retrykit/policy"
)

// An Option changes how [NewRateLimiter] builds its limiter. A nil Option
// changes nothing.
type Option func(*options)

type options struct {
	idle     time.Duration
	idleSet  bool
	guard    *policy.Guard
	guardSet bool
}

// WithIdle sets the idle window: an item not requeued for longer than d
// starts over at the first delay, and its memory is given back without a
// Forget. The default is twice the policy's cap, as client-go's
// flowcontrol.Backoff does; a policy with no cap has none by default. A d ≤ 0
// means items never start over by themselves: only Forget gives their memory
// back.
func WithIdle(d time.Duration) Option {
	return func(o *options) { o.idle, o.idleSet = d, true }
}

// WithGuard returns an Option that gives the limiter g as its own guard
// instead of a fresh one (see [NewRateLimiter]), for example one guard
// shared by the limiters of every controller that calls the same
// dependency. WithGuard(nil) gives the limiter no guard of its own: every
// requeue then waits its back-off delay. A guard in the policy itself
// (policy.Policy.WithGuard) is always used, and takes the place of the
// limiter's own. These are retryhttp.WithGuard's rules.
func WithGuard(g *policy.Guard) Option {
	return func(o *options) { o.guard, o.guardSet = g, true }
}
