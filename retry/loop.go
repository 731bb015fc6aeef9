package retry

import (
	"context"

	"github.com/retrykit/retrykit/policy"
)

// Loop runs fn again and again until ctx ends, or until fn returns a
// [Permanent] error or an error the policy does not retry. It is for work
// that should keep running: watch streams, consumers, supervised processes.
// Between runs it waits the policy's back-off, after a successful run too,
// and never less than 10ms, so a run that ends at once cannot spin.
//
// Loop always returns an error: fn's own error when it is not to be
// retried, otherwise an [*Error]. Its usual end is ctx ending, and the error
// then matches ctx's error and the last run's error.
//
// The policy's limits count failed runs in a row. WithMaxAttempts(5) gives
// up after five failed runs in a row, and WithMaxElapsed(time.Minute) when
// runs have failed for a minute. The count starts again after a run that
// succeeded, or that sent the back-off back to its first delay; such a run
// that failed is the first of the new count.
//
// By default the back-off goes back to its first delay after a run that
// returned nil. policy.ResetRule{AfterStableRun: 10 * time.Minute}, the
// kubelet's rule, does so after a run that lasted ten minutes instead,
// whatever its outcome.
//
// Loop differs from [Do] in these ways:
//
//   - A success or [ErrPushback] does not end it.
//   - ctx's deadline is its lifetime, not a limit: when the next wait would
//     pass it, Loop ends as if ctx had ended, without [ErrExhausted]. The
//     error matches context.DeadlineExceeded, but not a cause that ctx
//     will carry, since ctx has not ended yet.
//   - The guard never ends it. A run the guard denies is not made and does
//     not count toward the attempt limit; Loop waits again and asks again.
//     The wait after a successful run does not ask the guard.
//   - [Error].Attempts counts the failed runs in a row; [DoneEvent].Attempts
//     counts every run. [Attempt] numbers the runs from the start of Loop.
//   - The time limit, [Error].Elapsed and the hooks' Elapsed count from
//     where the count of failed runs starts: the end of the run that
//     started it, or the start of Loop.
//
// Each run is an attempt to the hooks. OnRetry comes before each wait, with
// a nil Err after a successful run.
func Loop(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return run(ctx, fn, p, opts, true)
}
