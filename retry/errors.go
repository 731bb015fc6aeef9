package retry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrExhausted is matched by the error [Do] returns when the policy's attempt
// or time limit ends the call.
var ErrExhausted = errors.New("retry: exhausted")

// ErrThrottled is matched, with the last error, by the error a call returns
// when it runs out of attempts or time while its policy's guard
// (policy.Guard) holds its retries back: the retries it was denied were
// waited out, not made. [Loop] is never ended by the guard.
var ErrThrottled = errors.New("retry: retries throttled")

// ErrShed is matched by the error a call returns at once, before its first
// attempt, when its policy's guard holds new calls back: the dependency
// answers nothing but overload (timeouts, pauses asked for), and as many
// calls as the guard lets through are in flight already (see
// policy.Guard.Start). The operation never ran, so the call may be made
// again later whatever it does; the error's message says why it was held
// back. [Loop] is never held back.
var ErrShed = errors.New("retry: call shed")

// ErrAttemptTimeout is matched by an attempt's error when the policy's
// per-attempt timeout cut the attempt off while the caller's context was
// still live (see policy.Policy.WithAttemptTimeout). Such attempts are
// retried; if the call then ends, its *Error's Last matches it. The
// attempt's error is its own context's, so it matches
// context.DeadlineExceeded too: to tell a call's deadline from its
// attempts' timeouts, ask errors.Is for ErrAttemptTimeout, or ask the
// call's context.
var ErrAttemptTimeout = errors.New("retry: attempt timed out")

// ErrInvalid is matched by the error [Do] returns, before anything runs, when
// it is called with a nil context, a nil function or an invalid policy (the
// latter also matches policy.ErrInvalid).
var ErrInvalid = errors.New("retry: invalid call")

// Error is the error [Do] returns when it stops without success for a reason
// other than the operation's own error: the policy's limits, or the context.
// It unwraps to both the reason and the last operation error, so that
// errors.Is(err, context.Canceled) and errors.Is(err, io.ErrUnexpectedEOF)
// can both hold.
type Error struct {
	// Attempts is the number of times the operation ran, counting the
	// first call. For [Loop] it is what the attempt limit counts: the
	// failed runs in a row, since the last successful run or start-over
	// (the message gives the total too).
	Attempts int
	// Elapsed is the time from the start of the call to its end, the first
	// attempt included (for Loop, from the start of its current run of
	// failures), as the time limit counts it. It is 0 for a call that
	// nothing times: no deadline, time limit, hooks or stable-run reset rule.
	Elapsed time.Duration
	// Last is the error of the last attempt, or nil if none ran (or, in
	// Loop, if the last run succeeded).
	Last error
	// Cause says why the call stopped: ErrExhausted, ErrThrottled or
	// ErrShed (the policy's guard), ErrPushback (the server asked not to
	// retry), ErrHintTooLong (a hint above the policy's hint ceiling), or the
	// context's error (context.DeadlineExceeded also when the next wait
	// would have ended after the context's deadline).
	Cause error

	loop     bool   // a Loop's error: Attempts counts failed runs in a row
	total    int    // Loop: every run
	detail   string // what ended it, in words, when Cause alone does not say
	ctxCause error  // context.Cause, when it differs from Cause
	hint     bool   // a hinted wait was too long for the deadline or limit: matches ErrHintTooLong
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

// Unwrap returns the cause, ErrHintTooLong where a hint was too long, the
// context's cause where it differs, and the last operation error, leaving out
// those that are nil.
func (e *Error) Unwrap() []error {
	var hint error
	if e.hint && e.Cause != ErrHintTooLong {
		hint = ErrHintTooLong
	}
	errs := make([]error, 0, 4)
	for _, err := range [...]error{e.Cause, hint, e.ctxCause, e.Last} {
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

// Permanent marks err as not worth retrying: an operation returns it to end
// the call at once. [Do] then returns err itself (without the mark) when the
// operation returned Permanent(err) directly, and the operation's error as
// it is when the mark is wrapped deeper; errors.Is finds err either way.
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

// invalidCallError makes a policy's validation error match ErrInvalid too.
type invalidCallError struct{ err error }

func (e *invalidCallError) Error() string   { return e.err.Error() }
func (e *invalidCallError) Unwrap() []error { return []error{ErrInvalid, e.err} }
