// Package policy describes how to retry as an immutable [Policy] value: which
// delays to wait (schedule, cap, jitter), when to stop (attempt and time
// limits, a shared [Guard] that holds retries back in a storm), which errors to retry, when to start over
// ([ResetRule]) and which [Clock] to read. Package retry runs operations under a
// policy.
//
// A Policy is built from [Default], [Exponential], [Constant] or [Custom] and
// refined with With… methods, each of which returns a modified copy; it
// also reads from text, JSON and flags ([Parse]). Bad settings are never a
// panic: [Policy.Validate] reports them as errors matching [ErrInvalid], and
// retry.Do refuses to run an invalid policy.
//
// # Bad input
//
// Every setting has a documented meaning for every value:
//
//	setting                      invalid (Validate error)         special meaning
//	Exponential(base)            base ≤ 0                         —
//	Constant(d)                  d < 0                            0: retry at once, no timer
//	Custom(s)                    s == nil                         negative delays wait 0
//	WithFactor(f)                f < 1, NaN, ±Inf; on a           1: no growth; huge: saturates
//	                             constant or custom policy
//	WithCap(d)                   d < 0; 0 < d < base              0: no cap
//	WithMaxAttempts(n)           n < 0                            0: no limit; 1: no retry
//	WithMaxElapsed(d)            d < 0                            0: no limit
//	WithAttemptTimeout(d)        d < 0                            0: none
//	WithMaxHint(d)               d ≤ 0                            —
//	WithResetRule(r)             a negative duration              zero ResetRule: never start
//	WithJitter(j)                unknown kind; fraction NaN,      —
//	                             ±Inf, < 0, > 1 (symmetric), ≠ 0
//	                             (full, equal, decorrelated)
//	WithGuard(NewGuard(n, r))    n NaN or outside 1 to 1e6;       nil: no guard
//	                             r NaN, < 1e-6 or > n
//	WithHedging(h)               Delay < 0; MaxInFlight not 0     zero Hedging: no hedging;
//	                             or 2 to 10; non-zero with        MaxInFlight 0: 2
//	                             neither Delay nor Latency
//	  NewLatency(q, w)           q not strictly between 0 and 1;  —
//	                             w < 10/(1−q) or > 1e7
//	WithClock(c)                 a typed nil (a nil *clock.Mock)  nil: the real clock
//	WithRetryIf, WithRandom      —                                nil: retry every error,
//	                                                              the default source
//
// Delays are computed with saturating arithmetic: for every policy, valid or
// not, and every attempt number, the delays of [Policy.Backoff] and of a
// [Policy.Strategy] are within [0, cap].
package policy
