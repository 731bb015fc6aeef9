package retrykube

import (
	"time"
)

// An Option changes how [NewRateLimiter] builds its limiter. A nil Option
// changes nothing. Its shape is that of retry.Option.
type Option func(config) config

// config is what the Options of a limiter set.
type config struct {
	idle    time.Duration
	idleSet bool
}

// WithIdle sets the idle window to d. An item not requeued for longer than
// d starts over at the first delay, and gives its memory back without a
// Forget. The default is twice the policy's cap, as in client-go's
// flowcontrol.Backoff. A policy with no cap has no idle window by default.
// A d ≤ 0 means items never start over by themselves, and only Forget gives
// their memory back.
func WithIdle(d time.Duration) Option {
	return func(c config) config {
		c.idle, c.idleSet = d, true
		return c
	}
}
