package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

var (
	errNoHedge = fmt.Errorf("retry: Hedge given a policy without hedging (policy.Policy.WithHedging): %w", policy.ErrInvalid)
	errNoGuard = fmt.Errorf("retry: Hedge given a hedge quantile and no guard to estimate it; add one with policy.Policy.WithGuard: %w", policy.ErrInvalid)
)

// Hedge is [Do] for an operation that is safe to run more than once at the
// same time, such as a read or an idempotent write. Besides retrying
// failures as Do does, it starts another attempt beside one that is slow
// to return, as the policy's hedging says. Set that with
// policy.Policy.WithHedging. Do and DoValue never hedge, whatever the
// policy. Only the caller knows whether an operation may run twice at
// once, so it says so by calling Hedge.
//
// Each round of attempts starts one attempt at once. While none has
// succeeded, it starts another after each hedge delay, up to the hedge's
// MaxInFlight side by side. The first success wins. The call returns at
// once, and the other attempts' contexts are cancelled. Hedge does not
// wait for them to return.
//
// A failure does not end the round while other attempts of it still run.
// When every attempt of the round has failed, the round's error goes
// through the policy as Do's would: a back-off wait, then a new round, or
// the end of the call. The round's error is the last one to fail that
// carried a hint from [After]. When no attempt's error carried a hint, it
// is the error of the last attempt to fail. A [Permanent] error, or one the
// policy does not retry, ends the call at once and cancels the others. An
// error hinted with [After] starts no further hedge in its round, from the
// moment its attempt returns. So a server's Retry-After holds back every
// hedge not yet started.
//
// When ctx ends during a round, the call cancels the attempts still running
// and waits for them to return, as Do waits for its attempt. The round then
// ends as any other, and its error is the call's last error, as
// [Error].Last says. So the call keeps the error of its own that an attempt
// returned, not the previous round's. An attempt that returned only the
// context's error leaves the failure before it as the last error.
//
// Every hedge counts as an attempt for the policy's attempt limit. With a
// guard, a hedge starts only while the guard holds more than nine tenths of
// its capacity, and takes a token as it starts (see policy.Guard). A hedge
// that loses keeps the token it took, so hedges that never win stop. An
// attempt that succeeds only after the hedge delay adds nothing above that
// line. So a dependency that slows down as a whole stops getting hedges,
// while retries of real failures go on.
//
// No hedge starts whose delay would end after ctx's deadline or past the
// policy's time limit. None starts on the context of a request behind
// retryhttp.Handler or retrygrpc's server interceptors when that request is
// a retry already (see docs/layers.md). The hedge delay is not jittered.
// Under a guard, the duration of every successful attempt, measured on the
// policy's clock, goes to the guard's latency estimate, which a hedge
// quantile reads (see policy.Hedging).
//
// fn must be safe for concurrent use, and must not panic: an attempt runs
// on a goroutine of its own, where a panic ends the program. Hedge returns
// what Do returns. A call under a policy without hedging is an error
// matching policy.ErrInvalid, and so is one under a policy with a hedge
// quantile and no guard.
// Hedge costs goroutines and allocations that Do does not. Each attempt
// runs on a goroutine of its own, with a context of its own.
func Hedge(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	o := collect(opts)
	var c call
	if err := c.init(ctx, p, &o.hooks, false, refusal(fn == nil, true, p)); err != nil {
		return err
	}
	c.hedge = newHedger(&c, func(ctx context.Context) (any, error) { return nil, fn(ctx) })
	return c.run(nil)
}

// HedgeValue is [Hedge] for an operation that returns a value, as [DoValue]
// is for Do. It hands discard every value it does not return. It returns
// the value of the attempt that won. On failure, it returns the value of
// the attempt whose error it returns.
//
// That attempt's context is not cancelled when the call returns, so a value
// bound to it stays usable: an HTTP response's body is read after the call.
// The context keeps ctx's values and ends at ctx's deadline, as any context
// derived from ctx would. Once the call has returned, cancelling ctx no
// longer ends it, and ctx keeps no reference to it. Under the policy's
// attempt timeout, it ends at its own timeout too. The contexts of the other
// attempts are cancelled when their round ends. When ctx ends during a
// round, every attempt still running is cancelled, the one whose value the
// call returns too. When every attempt of a round fails, the call keeps one
// failure's value. If the call then waits and starts another round, that
// failure's context is cancelled as the wait starts.
//
// discard gets the values of every other attempt. Those are the attempts
// that failed and were retried, and the hedges that lost, including those
// that return after the call has. So a value that owns a resource, such
// as an *http.Response and its body, is never leaked. A losing hedge's
// value may be handed over on the attempt's own goroutine, so discard must
// be safe for concurrent use. discard gets T's zero value too, when an
// attempt returned it. A nil discard drops the values. discard is an
// argument rather than an Option, so that the compiler checks that it
// takes the operation's T.
func HedgeValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, discard func(T), opts ...Option) (T, error) {
	var v T
	var c call
	o := collect(opts)
	if err := c.init(ctx, p, &o.hooks, false, refusal(fn == nil, true, p)); err != nil {
		return v, err
	}
	h := newHedger(&c, func(ctx context.Context) (any, error) { return fn(ctx) })
	// A round hands the value it returns to keep; the one a later round
	// replaces is discarded then.
	kept := false
	h.keep = func(a any) {
		if kept && discard != nil {
			discard(v)
		}
		kept = true
		v = valueOf[T](a)
	}
	if discard != nil {
		h.drop = func(a any) { discard(valueOf[T](a)) }
	}
	c.hedge = h
	err := c.run(nil)
	return v, err
}

func newHedger(c *call, op func(context.Context) (any, error)) *hedger {
	return &hedger{op: op, clock: clock{clk: c.p.Clock()}, timeout: c.p.AttemptTimeout(), guard: guardOf(c.p), hooks: c.hooks}
}

// unhedged reports whether p is a valid policy without hedging.
func unhedged(p policy.Policy) bool {
	return p.Validate() == nil && p.Hedging() == (policy.Hedging{})
}

// unguarded reports whether p is a valid policy that hedges after a
// quantile with no guard to estimate it.
func unguarded(p policy.Policy) bool {
	return p.Validate() == nil && p.Hedging().Quantile != 0 && p.Guard() == nil
}

// valueOf returns a as a T, or T's zero value for a nil a.
func valueOf[T any](a any) T {
	v, _ := a.(T)
	return v
}

// hedger is what the rounds of a hedged call keep between them, and what
// the attempts' own goroutines need: those never touch the call itself,
// which stays on its caller's stack.
type hedger struct {
	op      func(context.Context) (any, error)
	keep    func(any) // the value of the attempt a round's error or success belongs to
	drop    func(any) // a value the call does not return; nil: nothing to clean up
	clock   clock     // the policy's clock, for timeouts and latencies
	timeout time.Duration
	guard   *admit.Guard // nil: none; else it learns the latency of every success
	hooks   hookSet      // the call's, for OnAttemptDone on the attempts' goroutines

	kept   context.CancelFunc // ends the context of the attempt whose value keep got
	hedges int                // hedges started so far
	won    int                // the attempt whose success ended the call
}
