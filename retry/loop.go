package retry

import (
	"context"

	"github.com/retrykit/retrykit/policy"
)

// Loop runs fn again and again, until ctx is done or fn returns a
// [Permanent] error or an error the policy does not retry.
// It is for reconnect and restart work: watch streams, consumers,
// supervised processes. Between runs it waits the policy's back-off,
// whether the run failed or succeeded. It never waits less than 10ms
// between the end of one run and the start of the next, whatever the
// policy or a hint says. So a run that ends at once cannot spin.
//
// Loop always returns a non-nil error. After a [Permanent] error or one the
// policy does not retry, it is fn's error as it is. Otherwise it is an
// [*Error]. The usual end of a Loop is its context ending. The error then
// matches ctx's error and the last run's error. Loop's context is its
// lifetime, not a limit. So when the next pause would pass ctx's deadline,
// Loop ends the same way, as if ctx had ended. A run whose error matches
// [ErrPushback] is a failed run like any other. docs/calls.md, under "How
// a call ends", lists every way a call ends and the sentinels each
// matches.
//
// The policy's reset rule decides when the back-off starts over at its
// first delay. By default it starts over after a run that returned nil,
// the first run included. The pause after that run is then the first
// delay, and the next failed run waits the second. With
// policy.ResetRule{AfterStableRun: 10 * time.Minute}, the kubelet's rule,
// it starts over after a run that lasted ten minutes, whatever its
// outcome.
//
// The policy's attempt and time limits count the failed runs in a row.
// They start again after a run that succeeded, and after a run that sent
// the back-off back to its first delay. Such a run that failed is the first
// failed run of the new count. The time limit counts from the end of that
// run. When there is no such run, the limits count from the start of the
// Loop. So WithMaxAttempts(5) means "give up after
// five failed runs in a row", and WithMaxElapsed(time.Minute) means "give
// up when failures have lasted a minute". When a limit ends Loop, the
// [*Error]'s Attempts are those failed runs. A run that succeeded never
// makes Loop give up. After it, the next failure starts a new count,
// whatever the reset rule.
//
// With a guard, the run after a failed one is a retry that the guard must
// admit. Use one guard per dependency, from policy.NewGuard. A run the
// guard denies is not made: Loop waits another pause and asks again. Loop
// is never ended by the guard. The pause after a successful run is not a
// retry, and the guard never holds it back.
//
// Each run is an attempt to the hooks: OnAttempt is called before it and
// OnAttemptDone after it. OnRetry is called before each pause. Its Err is
// nil after a run that succeeded. Its StartedOver is set when the back-off
// went back to its first delay. OnDenied is called for a run the guard
// denied.
func Loop(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return run(ctx, fn, p, opts, true)
}
