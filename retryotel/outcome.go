package retryotel

import (
	"context"
	"errors"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// outcome is how a call ended, as the retry.outcome attribute says it.
type outcome int

// The outcomes of a call; outcomeNames holds the attribute's values.
const (
	success     outcome = iota // the call returned nil
	exhausted                  // a limit ended it: the attempt or time limit, or a deadline the next wait would pass (retry.ErrExhausted)
	throttled                  // the call ran out of attempts or time while the guard held its retries back (retry.ErrThrottled)
	permanent                  // the operation's own error, not retried: retry.Permanent or the policy's RetryIf
	cancelled                  // the call's context was cancelled (context.Canceled)
	deadline                   // the call's context passed its deadline (context.DeadlineExceeded as the Cause)
	hintTooLong                // a server hint asked for a wait past the hint ceiling, the time limit or the deadline (retry.ErrHintTooLong)
	invalid                    // refused before the first attempt (policy.ErrInvalid)
	shed                       // ended while waiting its turn at the guard, before its first attempt (retry.ErrShed)
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	"success", "exhausted", "throttled", "permanent", "cancelled", "deadline", "hint_too_long", "invalid", "shed",
}

func (o outcome) String() string { return outcomeNames[o] }

// classify returns the outcome of a call that returned err, from why the
// call stopped (the Cause of a *retry.Error), never from what the
// operation's own error wraps: an operation that failed with a wrapped
// context.Canceled and was given up on is exhausted. An error other than a
// *retry.Error is the operation's own final one, permanent, unless it
// matches policy.ErrInvalid. A hint too long for the deadline is hintTooLong.
func classify(err error) outcome {
	if err == nil {
		return success
	}
	var e *retry.Error
	if !errors.As(err, &e) {
		if errors.Is(err, policy.ErrInvalid) {
			return invalid
		}
		return permanent
	}
	switch {
	case errors.Is(e.Cause, retry.ErrHintTooLong),
		errors.Is(err, retry.ErrHintTooLong) && !errors.Is(e.Last, retry.ErrHintTooLong):
		return hintTooLong
	case errors.Is(e.Cause, retry.ErrThrottled):
		return throttled
	case errors.Is(e.Cause, retry.ErrShed):
		return shed
	case errors.Is(e.Cause, retry.ErrExhausted):
		return exhausted
	case errors.Is(e.Cause, context.Canceled):
		return cancelled
	case errors.Is(e.Cause, context.DeadlineExceeded):
		return deadline
	case errors.Is(e.Cause, policy.ErrInvalid):
		return invalid
	}
	return permanent
}
