// Package retry runs an operation again until it succeeds.
//
//	err := retry.Do(ctx, func(ctx context.Context) error {
//		return client.Ping(ctx)
//	}, policy.Default().WithMaxAttempts(5))
//
// [Do] and [DoValue] make one call. [Loop] restarts long-running work.
// [Go] runs Do in an errgroup. [Hedge] and [HedgeValue] start a second
// attempt beside a slow one.
//
// A call ends when the operation succeeds, when it returns an error that is
// not to be retried, when a limit of the policy is reached, or when ctx
// ends. In every case but success, the error holds the last error the
// operation returned, if it ran. docs/calls.md lists every ending and the errors.Is
// tests for each.
//
// The operation can steer the call: [Permanent] stops it at once, [After]
// asks for a wait of a given length. [Hooks] watch each attempt, and
// [SlogHooks] logs them. [Attempt] tells the operation its attempt number.
//
// One policy can be shared by any number of calls: the state of a call
// lives in the call.
//
// Inside a request served behind retryhttp.Handler or retrygrpc's server
// interceptors, a call may retry less, so that only one layer of a system
// retries (docs/layers.md).
//
// # The loop
//
// Every call runs these steps. [Loop] differs in a few ways, which its doc
// gives.
//
//  1. Run the operation. While the dependency is overloaded, the guard may
//     first make a new call wait for its turn ([policy.Guard] says when).
//  2. End on success, on a [Permanent] error, on an error the policy does
//     not retry, or on [ErrPushback] (a server asked not to retry).
//  3. Tell the policy's guard how the attempt went.
//  4. End if ctx is done.
//  5. Pick the wait: the policy's next delay, or the wait the operation
//     asked for with [After].
//  6. End if a limit is reached: the attempt limit, the time limit, the
//     longest wait allowed by [policy.Policy.WithMaxHint], or ctx's
//     deadline if the wait would pass it.
//  7. Wait.
//  8. Ask the guard. If it denies the retry, the retry uses up one attempt
//     without running, and the call goes back to step 5. If that was the
//     last attempt, the call ends with [ErrThrottled].
//
// # Bad input
//
// A nil context, a nil function or an invalid policy makes the call return
// an error matching policy.ErrInvalid before anything runs. A nil [Option]
// or nil hooks change nothing. A panic in the operation or a hook is not
// recovered: in Do, DoValue and Loop it reaches the caller, and in Hedge,
// where attempts run on goroutines of their own, it ends the program.
package retry
