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
// the attempt limit, the time limit, or the context's deadline that the
// next wait would pass. The sentinels of the other limits refine it, so
// every limit matches it. docs/calls.md, under "How a call ends", lists
// every way a call ends and the sentinels each matches.
var ErrExhausted = errors.New("retry: exhausted")

// ErrThrottled is matched by the error of a call that a limit ended while
// the policy's guard denied its retries. It matches [ErrExhausted] too.
// See docs/calls.md, "How a call ends", and policy.Guard for the rule.
var ErrThrottled error = &limitError{"retry: retries throttled"}

// ErrShed is matched by the error of a call that ended while its first
// attempt waited for its turn at the policy's guard, so the operation never
// ran. It matches [ErrExhausted] too when a limit ended the wait, and the
// context's error when the context did. See docs/calls.md, "How a call
// ends", and policy.Guard, "New calls wait their turn", for the rule.
var ErrShed = errors.New("retry: call shed")

// ErrAttemptTimeout is matched by the error of an attempt that the
// policy's per-attempt timeout (policy.Policy.WithAttemptTimeout) cut off
// while the call's context was live. The call retries such an attempt, and
// the error of a call that gives up after it matches ErrAttemptTimeout
// through its Last. See docs/calls.md, "How a call ends".
var ErrAttemptTimeout = classify.ErrAttemptTimeout

// limitError is a sentinel that refines ErrExhausted: every error that
// matches it matches ErrExhausted too.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return ErrExhausted }

// Error is the error a call returns when it stops without success for a
// reason other than the operation's own error. The reasons are a limit, the
// guard, the context, a hint that asks for too long a wait, and a server
// that asked not to retry. Cause says which. Error unwraps to both the
// reason and the last operation error. So errors.Is(err, context.Canceled)
// and errors.Is(err, io.ErrUnexpectedEOF) can both hold. docs/calls.md, under
// "How a call ends", lists each reason and the sentinels it matches.
type Error struct {
	// Attempts counts the attempts that ran, the first included. A retry
	// the guard denied did not run, so it is not counted.
	//
	// In [Loop], Attempts counts the failed runs in a row that ended the
	// Loop. The doc of Loop says when that count starts again. The message
	// of a Loop's error also gives its total runs.
	Attempts int
	// Elapsed is the time from the start of the call to its end, the first
	// attempt included, as the time limit counts it.
	//
	// Elapsed is 0 unless the call reads the clock. A call reads the clock
	// only when it has one of these: a deadline on its context, a time
	// limit, hooks (a Hooks with at least one function set), or a
	// stable-run reset rule. Without them nothing times the call, and the
	// message leaves the time out. For example, a failure reads "gave up
	// after 6 attempts: busy" without hooks, and "gave up after 6 attempts
	// in 17s: busy" with an OnDone hook.
	//
	// In Loop, Elapsed counts from the same moment as the time limit,
	// which the doc of [Loop] gives.
	Elapsed time.Duration
	// Last is the error of the last attempt. It is nil when no attempt
	// ran. In Loop, it is nil when the last run succeeded.
	//
	// The caller's context may end during the last attempt, and that
	// attempt may return only the context's error, wrapped or not. Then
	// Last is the error of the attempt before it, if there was one. That
	// error says what the dependency did, and Cause holds the context's
	// error already. An attempt that returned an error of its own, such as
	// a connection reset, is the last error even then. So is an error that
	// joins one of its own to the context's (two %w, or errors.Join).
	Last error
	// Cause says why the call stopped: one of this package's sentinels,
	// or the context's error when the caller's context ended the call.
	// docs/calls.md, under "How a call ends", says which, and when.
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
	if e.Cause == ErrExhausted {
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
