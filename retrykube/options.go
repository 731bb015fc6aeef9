package retrykube

import "time"

// An Option changes how [NewRateLimiter] builds its limiter. A nil Option
// changes nothing.
type Option func(*options)

type options struct {
	idle    time.Duration
	idleSet bool
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
