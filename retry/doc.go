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
// Every call runs the same steps, in this order. Each step is a rule of
// its own. While the dependency answers nothing but overload, a new call
// may first wait for its turn at the policy's guard (see policy.Guard,
// "New calls wait their turn").
//
//  1. Make an attempt. [Hedge] may start hedges beside it.
//  2. End on success, on a [Permanent] error, on [ErrPushback], or on an
//     error the policy does not retry. In [Loop], a success and
//     ErrPushback do not end the call. It goes on.
//  3. Account for the outcome: tell the policy's guard, and apply the
//     reset rule.
//  4. End if ctx is done.
//  5. Work out the wait: the schedule's delay, or the operation's hint from
//     [After]. In Loop, the wait is at least 10ms.
//  6. End if a limit says so. The limits are the attempt limit, the hint
//     ceiling, the time limit, and ctx's deadline when the wait would pass
//     it. In [Loop], ctx's deadline is not a limit. When the wait would
//     pass it, Loop ends as if ctx had ended (see [Loop]).
//  7. Wait. After a denied retry, the wait ends early when a success lets
//     it go (see policy.Guard). A wait for a hint never ends early.
//  8. Ask the guard. If it admits the retry, go to 1. If it denies it, no
//     attempt runs. The denied retry counts toward the attempt limit. If
//     it was the last retry the limit allows, the call ends with
//     [ErrThrottled]. Otherwise the call goes to 5.
//
// A denied retry did not run, so [Error].Attempts and [DoneEvent].Attempts
// leave it out: they count only the attempts that ran. [DoneEvent].Denied
// counts the denied retries. In Loop, a denied retry does not count toward
// the attempt limit.
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
