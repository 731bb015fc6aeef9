package retry

import (
	"context"

	"github.com/retrykit/retrykit/policy"
)

// Loop runs fn again and again, for reconnect and restart work (watch
// streams, consumers, supervised processes), until ctx is done or fn returns
// a [Permanent] error or one the policy does not retry. Between runs it waits
// the policy's back-off, whether the run failed or succeeded, and never less
// than 10ms, so that a run that ends at once cannot spin: Loop makes at most
// one run per 10ms, whatever the policy or a hint says.
//
// Loop always returns a non-nil error: fn's error as it is (without the
// mark) after a [Permanent] error or one the policy does not retry; an
// [*Error] matching ctx's error and the last run's error when ctx ends it;
// one matching [ErrExhausted] when its limits do (below).
//
// The policy's reset rule decides when the back-off starts over at its first
// delay: by default after a run that returned nil, the first run included;
// with policy.ResetRule{AfterStableRun: 10 * time.Minute}, the kubelet's rule,
// after a run that lasted ten minutes whatever its outcome. The policy's
// attempt and time limits count the current run of failures: from the last
// run that succeeded or started the back-off over (the time limit from that
// run's end), so that WithMaxAttempts(5) means "give up after five failed
// runs in a row" and WithMaxElapsed(time.Minute) "give up when failures
// have lasted a minute"; they end Loop with an [*Error] matching
// [ErrExhausted] whose Attempts are the failed runs they counted. A run that
// succeeded never makes Loop give up, and ends a run of failures whatever
// the reset rule.
//
// With a guard (policy.NewGuard, one per dependency), the run after a
// failed one is a retry the guard must admit; a run it holds back is waited
// out for another pause, and asked for again. Loop is never ended by the
// guard: it waits. The pause after a successful run is not a retry and is
// never held back.
//
// Each run is an attempt to the hooks: OnAttempt before it, OnAttemptDone
// after it. Each wait is announced to OnRetry, with Err nil after a run that
// succeeded, and StartedOver set when the back-off started over. A run the
// guard held back is told to OnDenied.
func Loop(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return run(ctx, fn, p, opts, true)
}
