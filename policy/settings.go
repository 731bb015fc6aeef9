package policy

import "time"

// A policy's settings read back, for package retry and for integrations
// that run calls of their own (a queue's retry policy, a rate limiter).
// Each returns what the With… method of the same name set, for the zero
// Policy the default's. The schedule and the retry predicate are read
// through [Policy.Backoff] and [Policy.Retryable], validity through
// [Policy.Validate].

// MaxAttempts returns the attempt limit, counting the first call; 0: none.
func (p Policy) MaxAttempts() int { return p.cfg().maxAttempts }

// MaxElapsed returns the time limit, counted from the start of a call; 0:
// none.
func (p Policy) MaxElapsed() time.Duration { return p.cfg().maxElapsed }

// AttemptTimeout returns each attempt's own timeout; 0: none.
func (p Policy) AttemptTimeout() time.Duration { return p.cfg().attemptTime }

// MaxHint returns the hint ceiling: the longest wait an operation's hint
// ([retry.After], Retry-After) may ask for.
func (p Policy) MaxHint() time.Duration { return p.cfg().maxHint }

// Clock returns the policy's clock; nil stands for the real one.
func (p Policy) Clock() Clock { return p.cfg().clock }

// Guard returns the policy's guard, nil if it has none.
func (p Policy) Guard() *Guard { return p.cfg().guard }

// Hedging returns how calls under the policy are hedged: the zero Hedging
// when they are not, which is also what a Hedging that hedges nothing
// (no delay and no latency) reads back as.
func (p Policy) Hedging() Hedging { return p.cfg().hedging }

// ResetRule returns when the back-off starts over.
func (p Policy) ResetRule() ResetRule { return p.cfg().reset }
