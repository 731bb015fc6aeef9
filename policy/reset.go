package policy

import "time"

// ResetRule says when a sequence of attempts starts over at the first delay.
// Package retry applies it between attempts and between the runs of
// retry.Loop; [Policy.Strategy] applies it to a Strategy.
//
// The zero ResetRule never starts over. Every policy starts with
// ResetRule{OnSuccess: true} until [Policy.WithResetRule] changes it.
type ResetRule struct {
	// OnSuccess starts over after a successful attempt or run.
	OnSuccess bool
	// AfterStableRun starts over after an attempt or run that lasted at
	// least this long, whatever its outcome: the kubelet's rule, where a
	// container that ran for 10 minutes restarts at 10s. 0 turns it off.
	AfterStableRun time.Duration
	// AfterIdle starts over when more than this has passed since the
	// previous failure: client-go's rule, where an entry idle for longer than
	// twice the cap starts over. 0 turns it off.
	AfterIdle time.Duration
}

// resetOnSuccess is every policy's reset rule until WithResetRule.
var resetOnSuccess = ResetRule{OnSuccess: true}

// StartsOver reports whether the sequence starts over after an attempt or
// run that succeeded (or not), lasted ran, and ended idle after the
// previous failure (idle < 0 when there was none).
func (r ResetRule) StartsOver(succeeded bool, ran, idle time.Duration) bool {
	return succeeded && r.OnSuccess ||
		r.AfterStableRun > 0 && ran >= r.AfterStableRun ||
		r.AfterIdle > 0 && idle > r.AfterIdle
}
