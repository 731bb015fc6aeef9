package policy

import "time"

// The getters read a policy's settings back, for package retry and for
// integrations that run calls of their own, such as a queue's retry policy
// or a rate limiter. Each returns what the With… method of its name set, as
// it was set, an invalid value included: Validate reports that. For a policy
// that never set it, each returns the default. The schedule and the retry
// predicate are read through [Policy.Backoff] and [Policy.Retryable].

// MaxAttempts returns the attempt limit set by WithMaxAttempts. Attempts
// count the first attempt. 0, the default, means no limit.
func (p Policy) MaxAttempts() int { return p.cfg().maxAttempts }

// MaxElapsed returns the time limit set by WithMaxElapsed, counted from the
// start of a call. 0, the default, means no limit.
func (p Policy) MaxElapsed() time.Duration { return p.cfg().maxElapsed }

// AttemptTimeout returns each attempt's own timeout, set by
// WithAttemptTimeout. 0, the default, means none.
func (p Policy) AttemptTimeout() time.Duration { return p.cfg().attemptTime }

// MaxHint returns the hint ceiling set by WithMaxHint: the longest wait that
// an operation's hint, such as retry.After or a Retry-After, may ask for. It
// is 5 minutes by default.
func (p Policy) MaxHint() time.Duration { return p.cfg().maxHint }

// Clock returns the clock set by WithClock. nil, the default, means the real
// clock.
func (p Policy) Clock() Clock { return p.cfg().clock }

// Guard returns the guard set by WithGuard. nil, the default, means none.
func (p Policy) Guard() *Guard { return p.cfg().guard }

// Hedging returns the hedging set by WithHedging. The zero Hedging, the
// default, hedges nothing.
func (p Policy) Hedging() Hedging { return p.cfg().hedge }

// ResetRule returns the rule set by WithResetRule, which says when the
// back-off starts over. By default it starts over after a success.
func (p Policy) ResetRule() ResetRule { return p.cfg().reset }
