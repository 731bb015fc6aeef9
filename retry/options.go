package retry

import (
	"context"
	"time"
)

// An Option changes one call of [Do], [DoValue], [Loop], [Go], [Hedge] or
// [HedgeValue]. Build one with [WithHooks]. An Option is a plain value, so
// build it once and pass it to any number of calls. A nil Option changes
// nothing.
//
// Every package of retrykit has an Option of this shape: a function that
// takes the settings by value and returns them changed. Settings passed by
// value stay on the caller's stack, where a pointer would move them to the
// heap, so a call with options allocates nothing for them.
type Option func(config) config

// config is the settings of one call.
type config struct {
	hooks hookSet
}

// collect adds up the options of one call, in the order given.
func collect(opts []Option) config {
	var o config
	for _, opt := range opts {
		if opt != nil {
			o = opt(o)
		}
	}
	return o
}

// WithHooks returns an Option that tells h about the call's attempts, its
// waits and its end. Every Hooks given to a call is told, in the order
// given. A nil h is skipped, and so are nil fields in h.
func WithHooks(h *Hooks) Option {
	if h == nil || h.empty() {
		return nil // observes nothing: the call runs as without it
	}
	return func(o config) config {
		o.hooks.add(h)
		return o
	}
}

// Hooks observe a call: each attempt, each wait and the end. A zero Hooks
// observes nothing. A Hooks may be shared by concurrent calls when its
// functions are safe for concurrent use.
//
// Every hook gets the call's context first, so tracing and request-scoped
// loggers work. Hooks run on the goroutine that runs the call, except
// OnAttemptDone in a hedged call. A hook must not block the call for long.
// A panic in a hook is not recovered. It leaves the call as a panic in the
// operation does, and OnDone is not called.
//
// The hooks hear of each step of a call, in this order:
//
//   - OnAttempt, just before an attempt starts.
//   - OnAttemptDone, when that attempt returns.
//   - OnRetry, after a failed attempt, before the call waits.
//   - When the wait is over, OnAttempt if the retry starts, or OnDenied if
//     the policy's guard denies it. After a denial no attempt runs. The
//     call calls OnRetry and waits again, or ends.
//   - OnDone, once, when the call ends.
//
// To count attempts, count OnAttempt calls. The count equals
// DoneEvent.Attempts. To count retries, count the OnAttempt events with
// Attempt above 1 and Hedge false. Do not count OnRetry calls: OnRetry is
// also called before a denied retry, a wait the context cuts short and a
// Loop's pause after a success. A denied retry still counts toward the
// attempt limit, as step 8 of "The loop" in the package doc says.
//
// In Hedge and HedgeValue, OnAttemptDone is called on the attempt's own
// goroutine. For a hedge that lost, that may be after the call has
// returned. So OnAttemptDone must be safe for concurrent use when the call
// hedges.
type Hooks struct {
	// OnAttempt is called just before each attempt starts: the first attempt,
	// every retry, every hedge, every Loop run. It returns the context the
	// attempt runs with. Return ctx unchanged, or nil, to keep it. So a
	// tracer can start a span for each attempt. When a call has several
	// Hooks, each OnAttempt gets the context the one before returned.
	OnAttempt func(context.Context, AttemptEvent) context.Context
	// OnAttemptDone is called when that attempt returns. It gets the
	// context that the OnAttempt of the same Hooks returned. When that
	// OnAttempt is nil or returned nil, it gets the context that OnAttempt
	// would have been given. Its event is OnAttempt's, with
	// Err and Duration filled in. It is called for every attempt.
	OnAttemptDone func(context.Context, AttemptEvent)
	// OnRetry is called before each wait for a retry. The wait follows a
	// failed attempt or a denied retry. OnRetry is not called when the call
	// ends instead of waiting. In a Loop, it is called before the pause
	// after a run that succeeded too, with Err nil.
	OnRetry func(context.Context, RetryEvent)
	// OnDenied is called when the policy's guard denies a retry after its
	// wait. No attempt runs. Its event is the one OnRetry got before that
	// wait.
	OnDenied func(context.Context, RetryEvent)
	// OnDone is called exactly once when the call ends, with what it
	// returns. A call refused before its first attempt is told too: a nil
	// function or context, an invalid policy. A nil context is passed on as
	// context.Background().
	OnDone func(context.Context, DoneEvent)
}

// empty reports whether h observes nothing.
func (h *Hooks) empty() bool {
	return h.OnAttempt == nil && h.OnAttemptDone == nil && h.OnRetry == nil && h.OnDenied == nil && h.OnDone == nil
}

// AttemptEvent describes one attempt, to OnAttempt and OnAttemptDone.
type AttemptEvent struct {
	Attempt  int           // 1 for the first attempt, numbered in the order attempts start, hedges included
	Hedge    bool          // started beside an attempt still running (policy hedging)
	Wait     time.Duration // the time waited since the attempt before, waits before denied retries included (0 for the first, and for a hedge its hedge delay)
	Err      error         // OnAttemptDone only: what the attempt returned
	Duration time.Duration // OnAttemptDone only: how long it ran
}

// RetryEvent describes a wait before a retry, as OnRetry gets it. OnDenied
// gets the same event when the guard denies the retry after that wait.
type RetryEvent struct {
	// Attempt is the number of attempts made so far, counting the first
	// call and every hedge. In Loop it counts every run.
	Attempt int
	// Err is the last attempt's error. It is nil after a Loop run that
	// succeeded.
	Err error
	// Delay is how long the call waits.
	Delay time.Duration
	// Elapsed is the time since the start of the call. It counts as
	// Error.Elapsed does, in Loop too.
	Elapsed time.Duration
	// Hinted says that Delay is the wait the operation asked for, such as
	// a server's Retry-After. See After.
	Hinted bool
	// StartedOver says that the reset rule sent the back-off back to its
	// first delay before this wait.
	StartedOver bool
}

// DoneEvent describes how a call ended.
type DoneEvent struct {
	// Attempts is the number of attempts made, counting the first attempt and
	// every hedge. It equals the calls of OnAttempt. In Loop it counts
	// every run, while Error.Attempts counts the failed runs in a row.
	Attempts int
	// Elapsed is Error.Elapsed: the time from the start of the call to its
	// end. In Loop it counts from the end of the last run that succeeded
	// or started the back-off over. When there is no such run, it counts
	// from the start of the Loop. The time limit counts the same way.
	Elapsed time.Duration
	// Err is what the call returns. An integration may return nil where the
	// loop saw an error: the retryhttp Transport returns a final response
	// with a nil error, and Err is then the loop's error. For a response that was not retried, Err
	// is the attempt's error, such as "status 500 Internal Server Error",
	// while retryhttp.Err returns nil.
	Err error
	// Won is the attempt whose success ended the call, numbered from 1 in
	// the order the attempts started. It is 0 when no success ended the
	// call, and so always 0 in Loop. Without hedging, a call that succeeds
	// has Won equal to Attempts.
	Won int
	// Hedges is how many of the attempts were started beside one still
	// running. See policy.Hedging.
	Hedges int
	// Waited is the time the call spent waiting between attempts: the
	// waits it made to their end, added up. A wait that the context cut
	// short does not count.
	Waited time.Duration
	// Denied is how many retries the policy's guard denied. It equals the
	// calls of OnDenied, and counts the denial that ended the call.
	Denied int
}
