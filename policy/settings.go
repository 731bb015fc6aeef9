package policy

import "time"

// Settings is what running a call under a policy needs to know of it: a
// copy of the policy's limits, clock, guard, hedging and reset rule, for
// package retry and for integrations that run calls of their own (a queue's
// retry policy, a rate limiter). Changing a Settings changes no policy.
//
// The schedule and the retry predicate are read through [Policy.Backoff] and
// [Policy.Retryable] instead, and validity through [Policy.Validate].
type Settings struct {
	MaxAttempts    int           // attempts, counting the first call; 0: no limit
	MaxElapsed     time.Duration // the time limit, from the start of a call; 0: none
	AttemptTimeout time.Duration // each attempt's own timeout; 0: none
	MaxHint        time.Duration // the longest hinted wait honoured (the hint ceiling)
	Clock          Clock         // nil: the real clock
	Guard          *Guard        // nil: no guard
	Hedge          Hedging       // the zero Hedging: no hedging
	Reset          ResetRule
}

// Settings returns the policy's settings. For the zero Policy they are the
// default's.
func (p Policy) Settings() Settings { return p.cfg().run }
