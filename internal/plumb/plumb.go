// Package plumb connects package policy to the packages that run calls
// under a policy (retry and its integrations): the parts of a policy that
// running a call needs and users do not. Package policy works out a
// policy's Settings when the value is made and sets the functions here when
// it is initialised. Their arguments are a policy.Policy, a *policy.Budget,
// a *policy.Guard or a *policy.Latency, passed as any so that this package
// imports none of them; none of the conversions allocates, since each of
// those types is a single pointer.
package plumb

import (
	"time"
	"unsafe"
)

// Clock is policy.Clock, repeated here so that Settings can hold one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Settings is what running a call needs to know of a policy, worked out
// once per policy value and never written after. The zero value is not a
// policy's: every policy's Settings come from Of.
type Settings struct {
	// Simple: a call needs nothing prepared before its first attempt (no
	// budget, attempt timeout or stable-run rule), and the policy is valid.
	Simple bool
	// Unobserved: nothing but the operation's word and the schedule's
	// delays can end a call or see it: no limit, budget, guard, jitter,
	// attempt timeout, hedging or timed reset rule. A valid policy only.
	Unobserved bool
	// ZeroDelays: every delay of the schedule is zero (Constant(0)).
	ZeroDelays bool

	MaxAttempts    int           // 0: no limit
	MaxElapsed     time.Duration // 0: no limit
	AttemptTimeout time.Duration // 0: none
	MaxHint        time.Duration
	Clock          Clock            // nil: the real clock
	RetryIf        func(error) bool // nil: every error

	ResetOnSuccess bool
	ResetStable    time.Duration // 0: off
	ResetIdle      time.Duration // 0: off

	Budget any // a *policy.Budget, or nil
	Guard  any // a *policy.Guard, or nil
	Hedge  any // a policy.Hedge that hedges, or nil
}

// StartsOver reports whether the reset rule of s starts the back-off over
// after an attempt or run that succeeded (or not), lasted ran, and ended
// idle after the previous failure (idle < 0 when there was none).
func (s *Settings) StartsOver(succeeded bool, ran, idle time.Duration) bool {
	return succeeded && s.ResetOnSuccess ||
		s.ResetStable > 0 && ran >= s.ResetStable ||
		s.ResetIdle > 0 && idle > s.ResetIdle
}

// GuardTokens and GuardRatio are the settings of the guard policy.NewGuard
// recommends, and that the integrations give a dependency of their own.
const (
	GuardTokens = 10
	GuardRatio  = 0.4
)

// Of returns the settings of *p, which must be a policy.Policy: a single
// pointer to its configuration, whose first field is its Settings, or nil
// for the default policy, whose Settings are Default. Package policy checks
// that layout when it is compiled; reading it here, rather than through a
// function package policy sets, lets a call's first try cost a load and a
// compare instead of an indirect call.
func Of[P any](p *P) *Settings {
	if s := *(**Settings)(unsafe.Pointer(p)); s != nil {
		return s
	}
	return Default
}

var (
	// Default is the Settings of the default policy, the zero Policy.
	Default *Settings

	// BudgetCall records one call at time now.
	BudgetCall func(b any, now time.Time)
	// BudgetTryRetry spends one retry at time now if the budget allows it.
	BudgetTryRetry func(b any, now time.Time) bool

	// GuardSuccess and GuardFailure record an attempt's outcome.
	GuardSuccess, GuardFailure func(g any)
	// GuardAllowRetry reports whether the guard allows a retry now.
	GuardAllowRetry func(g any) bool

	// LatencyObserve records the latency of a successful attempt.
	LatencyObserve func(l any, d time.Duration)
)
