package retry

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
)

// ErrPushback is matched by an attempt's error when the server asked that
// the request not be retried, and by the error of the call it ended at
// once. The policy's guard counts the attempt as overload. An operation
// says so by wrapping it, for example fmt.Errorf("%w: %w",
// retry.ErrPushback, err). retryhttp and retrygrpc mark the server signals
// they read with it. See docs/calls.md, "How a call ends".
var ErrPushback = classify.ErrPushback

// Served tells a server whether its failed answer to one request should ask
// the caller not to retry. Get one with [Serve]. Served looks at the last
// call that failed on the request's context. The answer asks the caller not
// to retry when that call gave up for one of these reasons:
//
//   - The policy's guard shed the call, with [ErrShed].
//   - The guard held the call's retries back, with [ErrThrottled], after an
//     attempt that reached the dependency.
//   - The guard had no whole token left when the call ended, and the last
//     attempt reached the dependency. Retries to it do not pay off.
//   - Every attempt of the call showed overload, such as its timeouts, and
//     so did the last 16 attempts in a row that the policy's guard saw
//     (see policy.Guard). One call whose attempts all met overload may
//     be bad luck, at a dependency that sheds a share of its requests at
//     random. Sixteen in a row are not. Without a guard, such a call says
//     nothing.
//   - The dependency itself asked not to retry, with [ErrPushback].
//
// A call that ran out of attempts against failures that were not overload
// says nothing, since a retry upstream may well succeed. Nor does a call
// that the request's own context ended, or a call that succeeded. A refused
// or reset connection, or an EOF before the answer, is a failure of the
// hop, not an answer of the dependency. A call whose last attempt failed
// that way asks for no pushback, even when its guard has no token left.
//
// A server asks Served only for an answer that is a failure. A handler that
// recovers from a failed call with a fallback answers a success, and so
// sends no signal. A Served is safe for concurrent use.
type Served struct {
	previous int
	last     atomic.Int32 // the verdict of the call that failed last: one of the states below
}

const (
	servedNone   = iota // no call on the context has failed
	servedRetry         // the last failed call says a retry upstream may succeed
	servedRepeat        // the last failed call says a retry upstream would only repeat it
)

type servedKey struct{}

// Serve returns a copy of ctx that records how the calls of package retry
// made on it end, and the Served that reads the record. previous is how many
// attempts of the request being served came before this one, 0 for a first
// attempt, as a caller's previous-attempts header says. A negative previous
// counts as 0.
//
// A call made on the returned context while previous is at least 1 makes
// one attempt at a time. It does not retry an answer of its dependency,
// and a [Hedge] starts no hedge beside a slow attempt. The request is a
// retry already, and its caller retries it again if need be. So the
// attempts along a chain of servers add up rather than multiply. When the
// call did not reach its dependency, because of a refused or reset
// connection or an EOF before the answer, it retries as the policy says.
// Nothing downstream did any work.
//
// A call made on the returned context retries an answer of its dependency
// only while its policy's guard has a whole token left, even when it is
// the only call in flight. Otherwise it ends at once with [ErrThrottled],
// rather than waiting, and the server's answer asks its caller not to
// retry. A [Loop] is bounded by neither rule.
func Serve(ctx context.Context, previous int) (context.Context, *Served) {
	s := &Served{previous: max(previous, 0)}
	return context.WithValue(ctx, servedKey{}, s), s
}

// Pushback reports whether a failed answer should ask the caller not to
// retry, by the rule of [Served]. A nil *Served says false.
func (s *Served) Pushback() bool {
	return s != nil && s.last.Load() == servedRepeat
}

// Previous returns the previous attempts given to [Serve]. A nil *Served
// has 0.
func (s *Served) Previous() int {
	if s == nil {
		return 0
	}
	return s.previous
}

// PreviousAttempts returns the attempts that came before the request that
// ctx serves, as given to [Serve], and 0 when ctx serves none. A client
// adds it to the previous attempts it sends downstream, so that a server
// called while serving a retry knows that it serves one too.
func PreviousAttempts(ctx context.Context) int {
	if ctx == nil {
		return 0
	}
	s, _ := ctx.Value(servedKey{}).(*Served)
	return s.Previous()
}

// served returns the Served that ctx records calls for, or nil.
func served(ctx context.Context) *Served {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(servedKey{}).(*Served)
	return s
}

// tellServed records on the call's Served, if any, how a call that failed
// with err ended.
func (c *call) tellServed(err error) {
	s := c.served
	if s == nil || err == nil || c.loop {
		return
	}
	s.last.Store(int32(c.repeat(err)))
}

// repeat says whether a retry upstream would only repeat the failure err
// that ends the call, by the rule of [Served].
func (c *call) repeat(err error) int {
	var e *Error
	if !errors.As(err, &e) {
		if c.overloaded() {
			return servedRepeat // the policy retries none of it
		}
		return servedRetry
	}
	switch {
	case e.deadline:
		return servedRetry // the request's deadline ended it: nothing is known
	case e.Cause == ErrThrottled && unreached(e.Last):
		return servedRetry // the hop failed, not the dependency: see unreached
	case e.Cause == ErrThrottled, e.Cause == ErrShed, e.Cause == ErrPushback:
		return servedRepeat
	case e.Cause != ErrExhausted && e.Cause != ErrHintTooLong:
		return servedRetry // the request's context ended it: nothing is known
	case c.overloaded():
		return servedRepeat
	}
	if g := guardOf(c.p); g != nil && g.Tokens() < 1 && !unreached(e.Last) {
		return servedRepeat
	}
	return servedRetry
}

// overloaded reports whether every attempt of the call showed overload
// and the policy's guard agrees: its last 16 attempts in a row did too.
func (c *call) overloaded() bool {
	return c.attempts > 0 && !c.mixed && guardOf(c.p).Stalled()
}

// oneAttempt reports whether the call serves a request that is a retry
// already, by the rule of [Serve], and so makes no other attempt beside or
// after its latest. err is that attempt's error: an answer of the
// dependency is not retried, a failure that did not reach it is. A nil err
// asks about a hedge beside a running attempt, which never starts.
func (c *call) oneAttempt(err error) bool {
	return !c.loop && c.served.Previous() > 0 && !unreached(err)
}

// unreached reports whether err, the last error of a call, says that the
// dependency was not reached: a refused or reset connection, an EOF before
// the answer. Its guard's empty tokens then say nothing to the callers
// upstream, who may reach another instance, or the same one back.
func unreached(err error) bool {
	return ConnectionError(err) && classify.Of(err).Outcome != admit.Overloaded
}

// starved reports whether the call serves a request (see Serve), its
// guard has no whole token left, and err, its last error, is an answer of
// the dependency: it is not retried, and its caller is told not to retry
// instead.
func (c *call) starved(err error) bool {
	if c.served == nil || c.loop || unreached(err) {
		return false
	}
	g := guardOf(c.p)
	return g != nil && g.Tokens() < 1
}
