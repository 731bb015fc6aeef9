package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/retrykit/retrykit/internal/classify"
)

// ErrExhausted is matched by the error of every call that a limit ended:
// the attempt limit, the time limit, or ctx's deadline when the next wait
// would pass it. The sentinels of particular limits, such as [ErrThrottled],
// match ErrExhausted too. docs/calls.md lists every
// way a call ends.
var ErrExhausted = errors.New("retry: exhausted")

// ErrThrottled is matched by the error of a call that reached a limit while
// the policy's guard was denying its retries (see policy.Guard).
var ErrThrottled error = &limitError{"retry: retries throttled"}

// ErrShed is matched by the error of a call whose first attempt was still
// waiting for its turn at the policy's guard when the call ended, so the
// operation never ran and the call is safe to make again (see
// policy.Guard).
var ErrShed = errors.New("retry: call shed")

// ErrAttemptTimeout is matched by the error of an attempt that the
// policy's attempt timeout (policy.Policy.WithAttemptTimeout) cut off. Such
// an attempt is retried; a call that gives up after it matches
// ErrAttemptTimeout through its last error.
var ErrAttemptTimeout = classify.ErrAttemptTimeout

// limitError is a sentinel that refines ErrExhausted: every error that
// matches it matches ErrExhausted too.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return ErrExhausted }

// Error is the error a call returns when it gives up for a reason other
// than the operation's own error: a limit, the guard, ctx, a wait too long
// to make, or a server that asked not to retry. errors.Is finds both the
// reason and the last error the operation returned, so errors.Is(err,
// context.Canceled) and errors.Is(err, io.ErrUnexpectedEOF) can both hold.
// docs/calls.md lists each reason and what it matches.
type Error struct {
	// Attempts counts the attempts that ran, the first included. A retry
	// the guard denied did not run and is not counted. In [Loop] it counts
	// the failed runs in a row.
	Attempts int
	// Elapsed is the time from the start of the call to its end, as the
	// time limit counts it ([Loop] counts from elsewhere, as its doc says).
	//
	// Elapsed is 0 when the call never read the clock. A call reads it only
	// when it has a deadline on its context, a time limit, hooks or a
	// stable-run reset rule; otherwise nothing times the call, and the
	// message leaves the time out.
	Elapsed time.Duration
	// Last is the last error the operation returned. It is nil when the
	// operation never ran, and in [Loop] when the last run succeeded.
	//
	// When ctx ends during an attempt and the attempt returns only ctx's
	// error, Last is the error of the attempt before it, which says what the
	// dependency did. An attempt that returns an error of its own, alone or
	// joined to ctx's error, is Last.
	Last error
	// Cause says why the call stopped: one of this package's sentinels, or
	// ctx's error when ctx ended the call.
	Cause error

	loop     bool   // a Loop's error: Attempts counts the failed runs in a row
	total    int    // Loop: every run
	detail   string // what ended it, in words, when Cause alone does not say
	deadline bool   // the limit was ctx's deadline, which the next wait would pass: matches context.DeadlineExceeded
	ctxCause error  // context.Cause, when it differs from Cause
	also     error  // a sentinel matched besides Cause: ErrHintTooLong for a hinted wait too long for the deadline or limit, ErrShed for a held call whose context ended
}

// Error says why the call stopped, after how many attempts and how long,
// and ends with the last operation error, for example
// "retry: gave up after 5 attempts in 12.4s: dial tcp: connection refused".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("retry: ")
	head := strings.TrimPrefix(fmt.Sprint(e.Cause), "retry: ")
	switch e.Cause {
	case ErrExhausted:
		head = "gave up"
	case ErrPushback: // the last error says so already
		head = "stopped"
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
	if e.ctxCause != nil && (e.Last == nil || !strings.Contains(e.Last.Error(), e.ctxCause.Error())) {
		fmt.Fprintf(&b, ": cause: %v", e.ctxCause) // unless the last error says it
	}
	if e.Last != nil {
		b.WriteString(": ")
		b.WriteString(e.Last.Error())
	}
	return b.String()
}

// Timeout reports whether a deadline ended the call: ctx's deadline passed,
// or the next wait would have passed it. So url.Error's Timeout and
// os.IsTimeout see a request through retryhttp that ran out of time, as
// they see one through a plain http.Client.
func (e *Error) Timeout() bool {
	return e.Cause == context.DeadlineExceeded || e.deadline
}

// Unwrap returns the errors that errors.Is and errors.As look through:
// the cause, the last operation error, and what else docs/calls.md says
// the error matches. Nil ones are left out.
func (e *Error) Unwrap() []error {
	also := e.also
	if also == e.Cause {
		also = nil
	}
	var limit, deadline error
	if e.Cause == ErrShed {
		limit = ErrExhausted // a limit ended the wait of a held call; a context that ended it is the Cause instead
	}
	if e.deadline {
		deadline = context.DeadlineExceeded // so that checks for the deadline written before ErrExhausted covered it keep working
	}
	errs := make([]error, 0, 4)
	for _, err := range [...]error{e.Cause, limit, also, deadline, e.ctxCause, e.Last} {
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
	return &classify.Permanent{Err: err}
}

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
