// Package policy describes how to retry, as an immutable [Policy] value that
// any number of goroutines and calls can share. Package retry runs
// operations under a policy.
//
// Build a policy with [Default], [Exponential], [Constant] or [Custom], then
// refine it with With… methods, each of which returns a modified copy. A
// policy also reads from text, JSON and flags: see [Parse]. It says:
//
//   - which delays to wait: the schedule, [Policy.WithCap],
//     [Policy.WithJitter];
//   - when to stop: [Policy.WithMaxAttempts], [Policy.WithMaxElapsed],
//     [Policy.WithMaxHint];
//   - how long each attempt may run: [Policy.WithAttemptTimeout];
//   - which errors to retry: [Policy.WithRetryIf];
//   - when to start over at the first delay: [ResetRule];
//   - whether retries may go ahead: a [Guard], shared by every policy that
//     calls one dependency, holds them back in a storm;
//   - when to start a second attempt beside a slow one: [Hedging];
//   - which [Clock] to read.
//
// Three settings bound time: [Policy.WithCap] bounds each scheduled wait,
// [Policy.WithMaxHint] bounds a wait a server asks for, and
// [Policy.WithMaxElapsed] bounds the whole call. Their docs say what each
// does when it is reached.
//
// Bad settings are never a panic. [Policy.Validate] reports them as errors
// matching [ErrInvalid], and retry.Do refuses to run an invalid policy.
//
// # Bad input
//
// Every setting has a documented meaning for every value:
//
//	setting                      invalid (Validate error)         special meaning
//	Policy{} (the zero Policy)   always: no schedule set          —
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
//	WithHedging(h)               Delay < 0; Quantile NaN, < 0     zero Hedging: no hedging;
//	                             or > 0.99; MaxInFlight not 0     MaxInFlight 0: 2;
//	                             or 2 to 10; non-zero with        Quantile 0: the Delay alone
//	                             neither Delay nor Quantile
//	WithClock(c)                 a typed nil (a nil *clock.Mock)  nil: the real clock
//	WithRetryIf, WithRandom      —                                nil: retry every error,
//	                                                              the default source
//
// Delays are computed with saturating arithmetic. For every policy, valid or
// not, and every attempt number, the delays of [Policy.Backoff] are within
// [0, cap].
package policy
