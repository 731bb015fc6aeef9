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
// ([ErrExhausted], [ErrThrottled], context.Canceled,
// context.DeadlineExceeded). Operations steer the loop with [Permanent]
// (stop now) and [After] (a server's hint of how long to wait); [Hooks]
// observe it, and [SlogHooks] logs it.
//
// # Bad input
//
// A nil context or function or an invalid policy is an error matching
// [ErrInvalid], returned before anything runs. Nil hooks, nil hook
// functions, a nil [DiscardValue] cleanup and a zero [Option] are no-ops. A panic in the operation passes through unchanged.
// Huge delays and hints cannot overflow the time-limit and deadline checks.
package retry
