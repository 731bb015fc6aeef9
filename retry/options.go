package retry

import (
	"context"
	"time"
)

// An Option changes one call of [Do], [DoValue], [Loop], [Go], [Hedge] or
// [HedgeValue]. Build one with [WithHooks]. An Option is a plain value, so
// build it once and pass it to any number of calls. A nil Option changes
// nothing. Options allocate nothing per call.
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
// observes nothing, and nil fields are skipped. A Hooks may be shared by
// concurrent calls when its functions are safe for concurrent use.
//
// For a call that fails twice and then succeeds, the hooks run in this
// order: OnAttempt, OnAttemptDone, OnRetry, OnAttempt, OnAttemptDone,
// OnRetry, OnAttempt, OnAttemptDone, OnDone. When the guard denies a retry,
// OnDenied comes in place of its OnAttempt and OnAttemptDone, and OnRetry
// follows for the next wait.
//
// Every hook gets the call's context first, so tracing and request-scoped
// loggers work. Hooks run on the goroutine of the call and must not block
// it for long; in Hedge, OnAttemptDone runs on the attempt's own goroutine,
// possibly after the call returned, so it must be safe for concurrent use.
// A panic in a hook is not recovered, and OnDone is then not called.
//
// To count attempts, count OnAttempt calls, not OnRetry calls: OnRetry
// also comes before a denied retry and before a wait that ctx cuts short.
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
	// OnRetry is called before each wait for a retry, after a failed
	// attempt or a denied retry. It is not called when the call ends
	// instead of waiting.
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
	// Elapsed is the time since the start of the call, as Error.Elapsed
	// counts it.
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
	// Attempts is the number of attempts made, the first and every hedge
	// included: the number of OnAttempt calls. In Loop it counts every run.
	Attempts int
	// Elapsed is Error.Elapsed.
	Elapsed time.Duration
	// Err is the call's error. Through retryhttp, which returns a final
	// response with a nil error, it is the error the retry loop saw, such
	// as "status 503 Service Unavailable".
	Err error
	// Won is the number of the attempt whose success ended the call, or 0.
	// Without hedging, a call that succeeds has Won equal to Attempts.
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
