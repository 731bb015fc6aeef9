package retry

import (
	"errors"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/internal/served"
)

// ErrPushback is matched by an attempt's error when the server asked that
// the request not be retried, and by the error of the call it ended at
// once. The policy's guard counts the attempt as overload. An operation
// says so by wrapping it, for example fmt.Errorf("%w: %w",
// retry.ErrPushback, err). retryhttp and retrygrpc mark the server signals
// they read with it. See docs/calls.md, "How a call ends".
var ErrPushback = classify.ErrPushback

// tellServed records on the record of the request that the call serves, if
// any, how a call that failed with err ended. The rule is stated in
// docs/layers.md ("The rule"), the home of the server side's rules.
func (c *call) tellServed(err error) {
	if c.served == nil || err == nil || c.loop {
		return
	}
	c.served.Tell(c.repeat(err))
}

// repeat says whether a retry upstream would only repeat the failure err
// that ends the call: served.Repeat or served.Retry.
func (c *call) repeat(err error) int {
	var e *Error
	if !errors.As(err, &e) {
		if c.overloaded() {
			return served.Repeat // the policy retries none of it
		}
		return served.Retry
	}
	switch {
	case e.deadline:
		return served.Retry // the request's deadline ended it: nothing is known
	case e.Cause == ErrThrottled && c.unreached(e.Last):
		return served.Retry // the hop failed, not the dependency: see unreached
	case e.Cause == ErrThrottled, e.Cause == ErrShed, e.Cause == ErrPushback:
		return served.Repeat
	case e.Cause != ErrExhausted && e.Cause != ErrHintTooLong:
		return served.Retry // the request's context ended it: nothing is known
	case c.overloaded():
		return served.Repeat
	}
	if g := admission.Of(c.p); g != nil && g.Tokens() < 1 && !c.unreached(e.Last) {
		return served.Repeat
	}
	return served.Retry
}

// overloaded reports whether every attempt of the call counted as overload
// and the policy's guard agrees: its last 16 attempts in a row did too.
func (c *call) overloaded() bool {
	return c.attempts > 0 && !c.mixed && admission.Of(c.p).Stalled()
}

// oneAttempt reports whether the call serves a request that is a retry
// already, and so makes no other attempt beside or
// after its latest. err is that attempt's error: an answer of the
// dependency is not retried, a failure that did not reach it is. A nil err
// asks about a hedge beside a running attempt, which never starts.
func (c *call) oneAttempt(err error) bool {
	return !c.loop && c.served.Previous() > 0 && !c.unreached(err)
}

// unreached reports whether err, the last error of a call, says that the
// dependency was not reached: a refused or reset connection, an EOF before
// the answer. Its guard's empty tokens then say nothing to the callers
// upstream, who may reach another instance, or the same one back. The
// server side that made the record judges the network errors, since this
// package imports no network. A timeout is overload, never unreached.
func (c *call) unreached(err error) bool {
	return c.served.Unreached(err) && classify.Of(err).Outcome != admit.Overloaded
}

// starved reports whether the call serves a request, its
// guard has less than one token left, and err, its last error, is an answer of
// the dependency: it is not retried, and its caller is told not to retry
// instead.
func (c *call) starved(err error) bool {
	if c.served == nil || c.loop || c.unreached(err) {
		return false
	}
	g := admission.Of(c.p)
	return g != nil && g.Tokens() < 1
}
