// Package classify finds what an attempt's error means to the retry loop and
// to the policy's guard. Package retry runs its loop by it, and the
// integrations that run attempts themselves (retryhttp, retryriver) read
// errors by the same rules rather than re-derive them. It owns the marks
// that package retry puts on errors (retry.Permanent, retry.After) and the
// sentinels the rules look for, which package retry exports under its own
// names.
//
// The package is internal to this repository. Its API is held compatible
// from one release to the next, because nested modules built at one
// release import it from the root module of the same release (see
// RELEASING.md).
package classify

import (
	"errors"
	"time"

	"github.com/retrykit/retrykit/internal/admit"
)

// ErrPushback is retry.ErrPushback: the server asked not to retry.
var ErrPushback = errors.New("retry: the server asked not to retry")

// ErrAttemptTimeout is retry.ErrAttemptTimeout: the policy's attempt
// timeout cut the attempt off.
var ErrAttemptTimeout = errors.New("retry: attempt timed out")

// Permanent is the mark of retry.Permanent: the call ends with Err.
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

// Hint is the mark of retry.After: wait D before the next attempt.
type Hint struct {
	D   time.Duration
	Err error
}

func (h *Hint) Error() string { return h.Err.Error() }
func (h *Hint) Unwrap() error { return h.Err }

// A Verdict is what an attempt's error means to the loop and to the
// policy's guard, as [Of] finds it. The zero Verdict is that of nil: a
// success.
type Verdict struct {
	// Permanent is true when the error carries a [Permanent] mark: the call
	// ends with it.
	Permanent bool
	// Hinted is true when the error carries a [Hint]: the loop waits Hint
	// instead of the schedule's delay.
	Hinted bool
	// Hint is the wait the outermost hint asks for. A Hint ≤ 0 means retry
	// now.
	Hint time.Duration
	// Timeout is true for an attempt cut off by the policy's attempt timeout
	// ([ErrAttemptTimeout]) and for an error whose Timeout method returns
	// true, such as context.DeadlineExceeded.
	Timeout bool
	// Pushback is true when the error matches [ErrPushback].
	Pushback bool
	// Outcome is what the attempt tells the guard. A timeout, a hint or
	// ErrPushback is a sign of overload: admit.Overloaded. Any other error
	// is admit.Failed, and nil is admit.Succeeded.
	Outcome admit.Outcome
}

// Of returns what err, an attempt's error, means to the loop and to the
// guard. It looks through err's whole tree, wrapped and joined errors
// included. The outermost hint counts when there are several. Of does not
// ask the policy: whether the policy retries err is policy.Policy.Retryable.
// Of(nil) is the zero Verdict.
func Of(err error) Verdict {
	var v Verdict
	v.Classify(err)
	return v
}

// Classify sets v to err's Verdict. The loop keeps its verdict in the call
// and has it filled in place, which saves copying it.
func (v *Verdict) Classify(err error) {
	*v = Verdict{}
	v.mark(err)
	switch {
	case err == nil:
		v.Outcome = admit.Succeeded
	case v.Timeout || v.Hinted || v.Pushback:
		v.Outcome = admit.Overloaded
	default:
		v.Outcome = admit.Failed
	}
}

// mark adds to v the Permanent and Hint marks, the timeouts and ErrPushback
// found anywhere in err's tree. A hint found later does not replace one
// found earlier, so the outermost hint counts.
func (v *Verdict) mark(err error) {
	for err != nil {
		switch err {
		case ErrPushback:
			v.Pushback = true
			return
		case ErrAttemptTimeout:
			v.Timeout = true
			return
		}
		if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
			v.Timeout = true
		}
		switch e := err.(type) {
		case *Permanent:
			v.Permanent = true
			err = e.Err
		case *Hint:
			if !v.Hinted {
				v.Hinted, v.Hint = true, e.D
			}
			err = e.Err
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
