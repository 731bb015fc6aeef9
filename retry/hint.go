package retry

import (
	"errors"
	"time"
)

// ErrHintTooLong is matched, with the last error, by the error a call
// returns at once when an operation's hint (see [After]) asks for a wait
// above the policy's hint ceiling (policy.Policy.WithMaxHint), or one that
// would end after the context's deadline or past the policy's time limit
// (the error then matches context.DeadlineExceeded or [ErrExhausted] too).
// Do neither sleeps past those bounds nor comes back earlier than asked.
var ErrHintTooLong = errors.New("retry: hinted wait too long")

// After marks err with a server's hint: wait d before the next attempt
// instead of the schedule's delay (an HTTP Retry-After, a gRPC pushback).
// The hint is honoured as given, not cut to the policy's cap: coming back
// earlier than asked would only earn another refusal. A hint above the
// policy's hint ceiling (policy.Policy.WithMaxHint, 5 minutes by default),
// or one that would end past the context's deadline or the policy's time
// limit, ends the call at once with an error matching [ErrHintTooLong] and
// the last error. A hint ≤ 0 means retry now. The hint is not jittered.
//
// The schedule carries on after a hinted wait rather than starting over: a
// server that pushed back once is likely still loaded, and starting over
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

// marks is what an operation's error says to the loop.
type marks struct {
	permanent bool
	hinted    bool
	timeout   bool // a timeout: the attempt timeout, or an error whose Timeout method says so
	hint      time.Duration
}

// inspect finds the Permanent and After marks anywhere in err's tree. It
// walks the tree itself because errors.As would make its target escape, an
// allocation on every failed attempt. The outermost hint wins.
func inspect(err error) marks {
	var m marks
	for err != nil {
		if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
			m.timeout = true
		}
		switch e := err.(type) {
		case *attemptTimeoutError:
			m.timeout = true
			err = e.err
		case *permanentError:
			m.permanent = true
			err = e.err
		case *hintError:
			if !m.hinted {
				m.hinted, m.hint = true, e.d
			}
			err = e.err
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				im := inspect(inner)
				m.permanent = m.permanent || im.permanent
				m.timeout = m.timeout || im.timeout
				if im.hinted && !m.hinted {
					m.hinted, m.hint = true, im.hint
				}
			}
			return m
		default:
			return m
		}
	}
	return m
}
