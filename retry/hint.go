package retry

import (
	"time"

	"github.com/retrykit/retrykit/policy"
)

// ErrHintTooLong is matched by the error a call returns at once when an
// operation's hint from [After] asks for a wait above the policy's hint
// ceiling, past its time limit or past the context's deadline. It matches
// [ErrExhausted] too, since a limit ends the call. See docs/calls.md, "How
// a call ends".
var ErrHintTooLong error = &limitError{"retry: hinted wait too long"}

// After marks err with a server's hint: wait d before the next attempt,
// instead of the schedule's delay. An HTTP Retry-After and a gRPC pushback
// are such hints. The hint is honoured as given, not cut to the policy's
// cap. Coming back earlier than asked would only earn another refusal. A
// hint ≤ 0 means retry now. The hint is not jittered.
//
// A hint that is too long ends the call at once, with an error matching
// [ErrHintTooLong] and the last error. A hint is too long when it is above
// the policy's hint ceiling, 5 minutes by default, set by
// policy.Policy.WithMaxHint. It is also too long when it would end past
// the context's deadline or the policy's time limit.
//
// The schedule carries on after a hinted wait rather than starting over.
// A server that pushed back once is likely still loaded, and starting over
// would bring the client back at the base delay. After(d, nil) is nil.
func After(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &hintError{d: d, err: err}
}

type hintError struct {
	d   time.Duration
	err error
}

func (h *hintError) Error() string { return h.err.Error() }
func (h *hintError) Unwrap() error { return h.err }

// A Verdict is what an attempt's error means to the loop and to the
// policy's guard, as [Classify] finds it. Integrations that map errors onto
// their own vocabulary (a job queue's snooze, a status code) read it rather
// than re-derive the loop's rules. The zero Verdict is that of nil: a
// success.
type Verdict struct {
	// Permanent is true when the error carries a [Permanent] mark: the call
	// ends with it.
	Permanent bool
	// Hinted is true when the error carries a hint ([After]): the loop waits
	// Hint instead of the schedule's delay.
	Hinted bool
	// Hint is the wait the outermost hint asks for. A Hint ≤ 0 means retry
	// now.
	Hint time.Duration
	// Timeout is true for an attempt cut off by the policy's attempt timeout
	// ([ErrAttemptTimeout]) and for an error whose Timeout method returns
	// true, such as context.DeadlineExceeded.
	Timeout bool
	// Outcome is what the attempt tells the guard (policy.Guard.Record).
	// A timeout, a hint or ErrPushback is a sign of overload:
	// policy.Overloaded. Any other error is policy.Failed, and nil is
	// policy.Succeeded.
	Outcome policy.Outcome

	pushback bool // the error matches ErrPushback: the server asked not to retry
}

// Classify returns what err, an attempt's error, means to the loop and to
// the guard. It looks through err's whole tree, wrapped and joined errors
// included. The outermost hint counts when there are several. Classify
// does not ask the policy: whether the policy retries err is
// policy.Policy.Retryable. Classify(nil) is the zero Verdict.
func Classify(err error) Verdict {
	var v Verdict
	v.classify(err)
	return v
}

// classify sets v to err's Verdict. The loop keeps its verdict in the call
// and has it filled in place, which saves copying it.
func (v *Verdict) classify(err error) {
	*v = Verdict{}
	v.mark(err)
	switch {
	case err == nil:
		v.Outcome = policy.Succeeded
	case v.Timeout || v.Hinted || v.pushback:
		v.Outcome = policy.Overloaded
	default:
		v.Outcome = policy.Failed
	}
}

// mark adds to v the Permanent and After marks, the timeouts and
// ErrPushback found anywhere in err's tree. A hint found later does not replace one found
// earlier, so the outermost hint counts.
func (v *Verdict) mark(err error) {
	for err != nil {
		if err == ErrPushback {
			v.pushback = true
			return
		}
		if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
			v.Timeout = true
		}
		switch e := err.(type) {
		case *attemptTimeoutError:
			v.Timeout = true
			err = e.err
		case *permanentError:
			v.Permanent = true
			err = e.err
		case *hintError:
			if !v.Hinted {
				v.Hinted, v.Hint = true, e.d
			}
			err = e.err
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				v.mark(inner)
			}
			return
		default:
			return
		}
	}
}
