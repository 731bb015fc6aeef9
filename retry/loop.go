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
// Loop always returns a non-nil error. It is one of these, in the order
// of [Do]'s list:
//
//   - fn's error as it is, after a [Permanent] error or one the policy
//     does not retry. A top-level mark is removed.
//   - An [*Error] matching [ErrExhausted], when the policy's limits end
//     the Loop.
//   - An [*Error] matching ctx's error and the last run's error, when ctx
//     ends the Loop.
//   - An [*Error] matching [ErrHintTooLong], at once, when a run's hint
//     from [After] asks for too long a wait.
//   - An error matching [ErrInvalid], before anything runs, for a nil ctx,
//     a nil fn or an invalid policy.
//
// A run whose error matches [ErrPushback] is a failed run like any other.
// The server asked not to retry now, and Loop comes back after its
// back-off, as it does for every failure.
//
// The policy's reset rule decides when the back-off starts over at its
// first delay. By default it starts over after a run that returned nil,
// the first run included. The pause after that run is then the first
// delay, and the next failed run waits the second. With
// policy.ResetRule{AfterStableRun: 10 * time.Minute}, the kubelet's rule,
// it starts over after a run that lasted ten minutes, whatever its
// outcome.
//
// The policy's attempt and time limits count the current run of failures.
// That run starts after the last run that succeeded or started the
// back-off over. The time limit counts from the end of the last run that
// succeeded or started the back-off over. When there is no such run, it
// counts from the start of the Loop. So WithMaxAttempts(5)
// means "give up after five failed runs in a row", and
// WithMaxElapsed(time.Minute) means "give up when failures have lasted a
// minute". When a limit ends Loop, the [*Error]'s Attempts are the failed
// runs in a row. A run that succeeded never makes Loop give up. It ends a
// run of failures, whatever the reset rule.
//
// With a guard, the run after a failed one is a retry that the guard must
// admit. Use one guard per dependency, from policy.NewGuard. A run the
// guard denies is not made: Loop waits another pause and asks again. Loop
// is never ended by the guard. The pause after a successful run is not a
// retry, and the guard never holds it back.
//
// Each run is an attempt to the hooks: OnAttempt is called before it and
// OnAttemptDone after it. Each wait is announced to OnRetry. Its Err is nil
// after a run that succeeded. Its StartedOver is set when the back-off
// started over. A run the guard denied is told to OnDenied.
func Loop(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return run(ctx, fn, p, opts, true)
}
