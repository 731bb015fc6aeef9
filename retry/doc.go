// Package retry runs operations until they succeed, fail for good, exhaust
// their [policy.Policy] or are cancelled: see [Do] and [DoValue].
//
// All the state of one call (attempt number, start time, timer) lives on
// that call's stack, so a policy can be shared freely. When a call gives up
// for any reason but the operation's own, its error is an [*Error] that
// keeps the last operation error: errors.Is finds both it and the reason
// ([ErrExhausted], context.Canceled, context.DeadlineExceeded).
package retry
