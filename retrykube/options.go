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

// WithIdle sets the idle window to d. An item not requeued for longer than
// d starts over at the first delay, and gives its memory back without a
// Forget. The default is twice the policy's cap, as in client-go's
// flowcontrol.Backoff. A policy with no cap has no idle window by default.
// A d ≤ 0 means items never start over by themselves, and only Forget gives
// their memory back.
func WithIdle(d time.Duration) Option {
	return func(o *options) { o.idle, o.idleSet = d, true }
}

// WithGuard gives the limiter g as its guard, in place of the fresh one
// [NewRateLimiter] gives each limiter. Pass one guard to the limiters of
// every controller that calls the same dependency. WithGuard(nil) turns the
// guard off, and every requeue then waits its back-off delay. A guard set in
// the policy itself with policy.Policy.WithGuard always wins over this
// option. retryhttp.WithGuard follows the same rules for a Transport.
func WithGuard(g *policy.Guard) Option {
	return func(o *options) { o.guard, o.guardSet = g, true }
}
