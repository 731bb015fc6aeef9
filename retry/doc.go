// Package retry runs an operation again until it succeeds, fails for good,
// reaches the limits of its [policy.Policy] or is cancelled. [Do] and
// [DoValue] make one call. [Loop] is for reconnect and restart work. [Go]
// runs Do in an errgroup. [Hedge] and [HedgeValue] are for operations that
// are safe to run twice at once: a slow attempt gets another started beside
// it.
//
// All the state of one call lives on that call's stack: the attempt
// number, the start time, the timer. So one policy can be shared by any
// number of calls. A call that gives up for a reason other than the
// operation's own error returns an [*Error]. It keeps the last operation
// error, and errors.Is finds both that error and the reason.
// docs/calls.md, under "How a call ends", lists every way a call ends and
// the sentinels each matches.
//
// The operation steers the loop. [Permanent] stops it at once. [After]
// passes on a server's hint of how long to wait. [Hooks] observe each
// attempt, each wait and the end, and [SlogHooks] logs them.
//
// A server behind retryhttp.Handler or retrygrpc's server interceptors
// tells its callers not to retry a failure that a retry would only repeat.
// The calls made on the request's context are recorded for it, by the rule
// of docs/layers.md. An operation whose server pushed back wraps
// [ErrPushback].
//
// # The loop
//
// In a stall, a call may first wait for its turn at the policy's guard (see
// policy.Guard, "New calls wait their turn"). Then every call runs the same
// steps, in this order, each a rule of its own:
//
//  1. Make an attempt. [Hedge] makes a round of attempts.
//  2. End on success, on a [Permanent] error, on [ErrPushback], or on an
//     error the policy does not retry. A success and ErrPushback do not end
//     [Loop]: it goes on.
//  3. Account for the outcome: tell the policy's guard, apply the reset rule.
//  4. End if ctx is done.
//  5. Work out the wait: the schedule's delay, or the operation's hint from
//     [After]. Loop waits at least 10ms.
//  6. End if a limit says so: the attempt limit, the hint ceiling, the time
//     limit, or ctx's deadline when the wait would pass it. [Loop] stops
//     there too, but its error reads as ctx ending, not as a limit (see
//     [Loop]).
//  7. Wait. After a denied retry, the wait ends early when a success lets
//     it go (see policy.Guard), unless it is a hint.
//  8. Ask the guard. If it admits the retry, go to 1. If it denies it, no
//     attempt runs. The denied retry still counts toward the attempt
//     limit, except in Loop. The call then goes to 5, or ends with
//     [ErrThrottled] when that retry was the last the limit allows.
//     [Error].Attempts and [DoneEvent].Attempts count only the attempts
//     that ran. [DoneEvent].Denied counts the denied retries.
//
// # Bad input
//
// A nil context, a nil function or an invalid policy is an error matching
// policy.ErrInvalid. It is returned before anything runs. Nil hooks, nil hook
// functions, a nil [HedgeValue] discard and a nil [Option] change nothing.
// A panic in the operation or in a hook is not recovered. In Do, DoValue
// and Loop it passes through to the caller unchanged. In Hedge and
// HedgeValue each attempt runs on a goroutine of its own, so a panic in
// the operation ends the program. Huge delays and hints cannot
// overflow the time-limit and deadline checks.
package retry
