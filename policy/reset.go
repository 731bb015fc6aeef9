package policy

import "time"

// ResetRule says when a sequence of attempts starts over at the first delay.
// Package retry applies it between attempts and between the runs of
// retry.Loop. A ResetRule is a plain value.
//
// The zero ResetRule never starts over. It is not the default: every policy
// starts with ResetRule{OnSuccess: true} until [Policy.WithResetRule]
// changes it.
type ResetRule struct {
	// OnSuccess starts over after a successful attempt or run.
	OnSuccess bool
	// AfterStableRun starts over after an attempt or run that lasted at
	// least this long, whatever its outcome. It is the kubelet's rule: a
	// container that ran for 10 minutes restarts at 10s. 0 turns it off.
	AfterStableRun time.Duration
	// AfterIdle starts over when more than this has passed since the
	// previous failure. It is client-go's rule: an entry idle for longer
	// than twice the cap starts over. 0 turns it off.
	AfterIdle time.Duration
}

// resetOnSuccess is every policy's reset rule until WithResetRule.
var resetOnSuccess = ResetRule{OnSuccess: true}
