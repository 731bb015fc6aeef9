package retry

import (
	"context"
	"time"
)

// An Option changes one call of [Do], [DoValue], [Loop], [Go], [Hedge] or
// [HedgeValue]. Build one with [WithHooks]. An Option is a plain value:
// build it once and pass it to any number of calls. A nil Option changes
// nothing.
type Option func(options) options

// options are the options of one call. They are passed by value, so that
// adding them up allocates nothing.
type options struct {
	hooks *Hooks
}

// collect adds up the options of one call, in the order given.
func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			o = opt(o)
		}
	}
	return o
}

// WithHooks returns an Option that tells h about the call's retries and its
// end. Every Hooks given to a call is told, in the order given. A nil h is
// skipped, and so are nil fields in h.
func WithHooks(h *Hooks) Option {
	if h == nil || (h.OnRetry == nil && h.OnDone == nil) {
		return nil // observes nothing: the call runs as without it
	}
	return func(o options) options {
		o.hooks = join(o.hooks, h)
		return o
	}
}

// join returns hooks that call a, then b. Only a call given several Hooks
// pays for the joined one.
func join(a, b *Hooks) *Hooks {
	if a == nil {
		return b
	}
	j := &Hooks{}
	if a.OnRetry != nil || b.OnRetry != nil {
		j.OnRetry = func(ctx context.Context, e RetryEvent) {
			if a.OnRetry != nil {
				a.OnRetry(ctx, e)
			}
			if b.OnRetry != nil {
				b.OnRetry(ctx, e)
			}
		}
	}
	if a.OnDone != nil || b.OnDone != nil {
		j.OnDone = func(ctx context.Context, e DoneEvent) {
			if a.OnDone != nil {
				a.OnDone(ctx, e)
			}
			if b.OnDone != nil {
				b.OnDone(ctx, e)
			}
		}
	}
	return j
}

// Hooks observe a call: each retry before its wait starts, and the end. They
// are called on the goroutine running the call, with the call's context (so
// that tracing and request-scoped loggers work), and must not block it for
// long. A zero Hooks observes nothing; a Hooks may be shared by concurrent
// calls when its functions are safe for concurrent use.
type Hooks struct {
	// OnRetry is called when a wait is really about to start: after a
	// failed attempt that will be retried, never after the final one.
	OnRetry func(context.Context, RetryEvent)
	// OnDone is called exactly once when the call ends, with what it
	// returns, including a call refused before its first attempt (a nil
	// function or context, an invalid policy); a nil context is passed on as
	// context.Background().
	OnDone func(context.Context, DoneEvent)
}

// RetryEvent describes a wait about to start before a retry.
type RetryEvent struct {
	Attempt     int           // attempts made so far, counting the first call and every hedge (in Loop, every run)
	Err         error         // the last attempt's error; nil for a Loop run that succeeded
	Delay       time.Duration // the wait about to start
	Elapsed     time.Duration // since the start of the call (in Loop, of its current run of failures), as Error.Elapsed
	Hinted      bool          // Delay came from the operation's hint (see After)
	StartedOver bool          // the reset rule started the back-off over before this wait
	// Denied: the policy's guard held back the retry that the previous
	// wait was for, and the call waits Delay more before it asks again.
	// The denied retry used up an attempt of the attempt limit (but in
	// Loop).
	Denied bool
}

// DoneEvent describes how a call ended.
type DoneEvent struct {
	Attempts int           // attempts made, counting the first call and every hedge (in Loop, every run)
	Elapsed  time.Duration // as Error.Elapsed: from the start of the call
	Err      error         // what the call returns
	// Won is the attempt whose success ended the call, counting the first
	// call, numbered in the order the attempts started; 0 when none did.
	// Without hedging it is Attempts.
	Won int
	// Hedges is how many of the attempts were started beside one still
	// running (see policy.Hedging).
	Hedges int
	// Waited is the time the call spent waiting between attempts: the
	// waits it made to their end, added up (one cut short by the context
	// does not count).
	Waited time.Duration
	// Denied is how many retries the policy's guard held back, the one
	// that ended the call included.
	Denied int
}
