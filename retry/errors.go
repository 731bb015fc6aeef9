package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrExhausted is matched by the error a call returns when the policy's
// attempt limit or time limit ends the call. The retries were made, and
// they failed.
var ErrExhausted = errors.New("retry: exhausted")

// ErrThrottled is matched by the error a call returns when it runs out of
// attempts or time while its policy's guard holds its retries back. The
// error matches the last attempt's error too. The call waited each delay of
// its schedule. The guard denied the retries that were to follow, so they
// were not made. On a served request's context (see [Do]), the call does
// not wait for a token. It ends at once with ErrThrottled when its guard
// has no whole token left. [Loop] is never ended by the guard. See policy.Guard.
var ErrThrottled = errors.New("retry: retries throttled")

// ErrShed is matched by the error of a call that the policy's guard held
// back before its first attempt until its attempt limit, its time limit or
// its context ended it. A call held back waits for its turn as it waits
// for a denied retry; policy.Guard is the home of that rule, under "New
// calls held back". The operation never ran, so the call is safe to make
// again later, even when the operation is not idempotent. Its Last is nil.
// When the context ended the wait, the error matches the context's error
// too. [Loop] waits for its turn for as long as its context allows.
var ErrShed = errors.New("retry: call shed")

// ErrAttemptTimeout is matched by an attempt's error when the policy's
// per-attempt timeout cut the attempt off while the caller's context was
// still live. See policy.Policy.WithAttemptTimeout. The call retries such
// an attempt. If the call then ends, its *Error's Last matches
// ErrAttemptTimeout. The attempt's error matches context.DeadlineExceeded
// too, whatever error the operation returned. To tell a call's deadline
// from its attempts' timeouts, ask errors.Is for ErrAttemptTimeout, or ask
// the call's context.
var ErrAttemptTimeout = errors.New("retry: attempt timed out")

// ErrInvalid is matched by the error a call returns, before anything runs,
// for a call it cannot make: a nil context, a nil function, an invalid
// policy. For an invalid policy the error matches policy.ErrInvalid too.
var ErrInvalid = errors.New("retry: invalid call")

// Error is the error a call returns when it stops without success for a
// reason other than the operation's own error. The reason is the policy's
// attempt or time limit, the guard, the context, a hint that asks for too
// long a wait, or a server that asked not to retry. Cause says which. An
// invalid call is not an Error: see [ErrInvalid]. Error unwraps to both the
// reason and the last operation error. So errors.Is(err, context.Canceled)
// and errors.Is(err, io.ErrUnexpectedEOF) can both hold.
type Error struct {
	// Attempts counts the attempts that ran, the first attempt included.
	// A denied retry uses up the attempt it replaced but is not counted.
	// In [Loop] it is the failed runs in a row since the last run that
	// succeeded or started over. The message gives Loop's total runs too.
	Attempts int
	// Elapsed is the time from the start of the call to its end, the first
	// attempt included, as the time limit counts it. In Loop it counts from
	// the end of the last run that succeeded or started the back-off over.
	// When there is no such run, it counts from the start of the Loop. It
	// is 0 for a call that nothing times. A deadline, a time limit, hooks
	// or a stable-run reset rule time a call.
	Elapsed time.Duration
	// Last is the error of the last attempt. It is nil when no attempt
	// ran, and in Loop when the last run succeeded.
	Last error
	// Cause says why the call stopped. It is one of these:
	//   - ErrExhausted: the attempt or time limit ended the call. A hint
	//     that would have ended past the time limit gives this Cause too.
	//   - ErrThrottled: a limit ended the call while the guard denied its
	//     retries. On a served request's context, the call does not wait for a
	//     token. It ends at once with ErrThrottled when its guard has no
	//     whole token left.
	//   - The context's error: the context ended the call. It is
	//     context.DeadlineExceeded also when the next wait would have ended
	//     after the context's deadline, whether or not a hint asked for it.
	//   - ErrHintTooLong: a hint asked for a wait above the hint ceiling.
	//   - ErrPushback: the server asked not to retry.
	//   - ErrShed: the guard held the call back before its first attempt.
	Cause error

	loop     bool   // a Loop's error: Attempts counts failed runs in a row
	total    int    // Loop: every run
	detail   string // what ended it, in words, when Cause alone does not say
	ctxCause error  // context.Cause, when it differs from Cause
	also     error  // a sentinel matched besides Cause: ErrHintTooLong for a hinted wait too long for the deadline or limit, ErrShed for a call that ended while held back
}

// Error says why the call stopped, after how many attempts and how long,
// and ends with the last operation error, for example
// "retry: gave up after 5 attempts in 12.4s: dial tcp: connection refused".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("retry: ")
	head := strings.TrimPrefix(fmt.Sprint(e.Cause), "retry: ")
	if errors.Is(e.Cause, ErrExhausted) {
		head = "gave up"
	}
	switch {
	case e.Attempts == 0 && e.total == 0:
		fmt.Fprintf(&b, "%s before the first attempt", head)
	case e.loop:
		fmt.Fprintf(&b, "%s after %d failed %s in a row (%s in all)", head, e.Attempts, plural(e.Attempts, "run"), count(e.total, "run"))
	default:
		fmt.Fprintf(&b, "%s after %s", head, count(e.Attempts, "attempt"))
	}
	if (e.Attempts > 0 || e.total > 0) && e.Elapsed > 0 {
		fmt.Fprintf(&b, " in %v", roundElapsed(e.Elapsed))
	}
	if e.detail != "" {
		b.WriteString(" (")
		b.WriteString(e.detail)
		b.WriteString(")")
	}
	if e.ctxCause != nil {
		fmt.Fprintf(&b, ": cause: %v", e.ctxCause)
	}
	if e.Last != nil {
		b.WriteString(": ")
		b.WriteString(e.Last.Error())
	}
	return b.String()
}

// Unwrap returns the errors that errors.Is and errors.As look through. They
// are the cause, and the last operation error. ErrHintTooLong is added when
// a hint was too long, ErrShed when the call ended while the guard held it
// back, and the context's cause when it differs from its error. Nil ones
// are left out.
func (e *Error) Unwrap() []error {
	also := e.also
	if also == e.Cause {
		also = nil
	}
	errs := make([]error, 0, 4)
	for _, err := range [...]error{e.Cause, also, e.ctxCause, e.Last} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// count says "1 attempt" or "5 attempts".
func count(n int, noun string) string { return fmt.Sprintf("%d %s", n, plural(n, noun)) }

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func roundElapsed(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d
}

// Permanent marks err as not worth retrying. An operation returns it to
// end the call at once. When the operation returned Permanent(err) itself,
// [Do] returns err, without the mark. When the mark is wrapped deeper, Do
// returns the operation's error as it is. errors.Is finds err either way.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// attemptTimeoutError is an attempt's error when its own timeout cut it off.
type attemptTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("attempt timed out after %v: %v", e.timeout, e.err)
}

func (e *attemptTimeoutError) Unwrap() []error { return []error{ErrAttemptTimeout, e.err} }

// Is makes an attempt that its own timeout cut off match
// context.DeadlineExceeded, whatever error the operation returned then.
func (e *attemptTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// invalidCallError makes a policy's validation error match ErrInvalid too.
type invalidCallError struct{ err error }

func (e *invalidCallError) Error() string   { return e.err.Error() }
func (e *invalidCallError) Unwrap() []error { return []error{ErrInvalid, e.err} }
