// Package retry runs operations until they succeed, fail for good, exhaust
// their [policy.Policy] or are cancelled: [Do] and [DoValue] for one call,
// [Loop] for reconnect and restart work, [Go] for errgroup fan-out, [Hedge]
// and [HedgeValue] for operations safe to run twice at once, whose slow
// attempts get another started beside them.
//
// All the state of one call (attempt number, start time, timer) lives on
// that call's stack, so a policy can be shared freely. When a call gives up
// for any reason but the operation's own, its error is an [*Error] that
// keeps the last operation error: errors.Is finds both it and the reason
// ([ErrExhausted], [ErrThrottled], [ErrShed], context.Canceled,
// context.DeadlineExceeded). Operations steer the loop with [Permanent]
// (stop now) and [After] (a server's hint of how long to wait); [Hooks]
// observe it, and [SlogHooks] logs it.
//
// A server tells its callers not to retry a failure that a retry would
// only repeat. [Serve] records the calls made on a served request's
// context, [Served] says whether its failed answer should push back, and
// an operation whose server pushed back wraps [ErrPushback].
//
// # The loop
//
// A call whose policy's guard holds new calls back ends at once, before its
// first attempt, with [ErrShed] ([Loop] is never held back). Every other
// call runs the same steps, in this order, each a rule of its own:
//
//  1. make an attempt ([Hedge]: a round of attempts);
//  2. end on success ([Loop]: go on), on a [Permanent] error or on one the
//     policy does not retry;
//  3. account for the outcome: tell the policy's guard, apply its reset rule;
//  4. end if ctx is done;
//  5. work out the wait: the schedule's delay, or the operation's hint
//     ([After]); at least 10ms in Loop;
//  6. end if a limit says so: the attempt limit, the hint ceiling, the time
//     limit, ctx's deadline;
//  7. wait;
//  8. ask the guard: if it admits the retry, go to 1; if not, the denied
//     retry uses up its attempt (not in Loop) and the call goes to 5, or
//     ends with [ErrThrottled] when it was the last.
//
// # Bad input
//
// A nil context or function or an invalid policy is an error matching
// [ErrInvalid], returned before anything runs. Nil hooks, nil hook
// functions, a nil [HedgeValue] discard and a nil [Option] are no-ops. A
// panic in the operation passes through unchanged.
// Huge delays and hints cannot overflow the time-limit and deadline checks.
package retry
