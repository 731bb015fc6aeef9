// Package plumb connects package policy to package retry: the parts of a
// policy that running a call needs and users do not. Package policy sets
// these functions when it is initialised; package retry calls them. Their
// arguments are a policy.Policy, a *policy.Budget or a *policy.Guard, passed
// as any so that this package imports neither; none of the conversions
// allocates, since each of those types is a single pointer.
package plumb

import "time"

var (
	// Simple reports whether a call under the policy needs nothing prepared
	// before its first attempt, so that Do can take its shortest path.
	Simple func(p any) bool
	// StartsOver reports whether the policy's reset rule starts the back-off
	// over after an attempt or run that succeeded (or not), lasted ran, and
	// ended idle after the previous failure (idle < 0 when there was none).
	StartsOver func(p any, succeeded bool, ran, idle time.Duration) bool

	// BudgetCall records one call at time now.
	BudgetCall func(b any, now time.Time)
	// BudgetTryRetry spends one retry at time now if the budget allows it.
	BudgetTryRetry func(b any, now time.Time) bool

	// GuardSuccess and GuardFailure record an attempt's outcome.
	GuardSuccess, GuardFailure func(g any)
	// GuardAllowRetry reports whether the guard allows a retry now.
	GuardAllowRetry func(g any) bool
)
