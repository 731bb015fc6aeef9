package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

var (
	errNoHedge = fmt.Errorf("retry: Hedge given a policy without hedging (policy.Policy.WithHedging): %w", policy.ErrInvalid)
	errNoGuard = fmt.Errorf("retry: Hedge given a hedge quantile and no guard to estimate it; add one with policy.Policy.WithGuard: %w", policy.ErrInvalid)
)

// Hedge is [Do] for an operation that is safe to run more than once at the
// same time, such as a read or an idempotent write. It retries failures as
// Do does. It also starts another attempt beside one that is slow to
// return. The policy's hedging says when: set it with
// policy.Policy.WithHedging. Do and DoValue never hedge, whatever the
// policy. Only the caller knows whether an operation may run twice at
// once, so it says so by calling Hedge.
//
// Hedge returns what Do returns. It returns an error matching
// policy.ErrInvalid, before anything runs, for a policy without hedging,
// and for a policy with a hedge quantile and no guard.
//
// fn must be safe for concurrent use. It must not panic: each attempt runs
// on a goroutine of its own, where a panic ends the program. So Hedge costs
// goroutines and allocations that Do does not.
//
// # Rounds
//
// Hedge runs in rounds. A round starts one attempt at once. While no
// attempt has succeeded, it starts another after each hedge delay. At most
// the hedge's MaxInFlight attempts run side by side. The hedge delay is not
// jittered.
//
// The first success wins. The call returns at once and cancels the
// contexts of the other attempts. It does not wait for them to return.
//
// A failure does not end the round while other attempts of it still run.
// The round fails when all of its attempts have failed. The policy then
// treats the round's error as Do treats an attempt's error: it waits and
// starts a new round, or ends the call.
//
// Which error a failed round returns:
//
//   - If an attempt's error asked for a wait with [After], the last such
//     error to come back.
//   - Otherwise, the error of the last attempt to fail.
//
// Some errors end the call at once and cancel the other attempts: a
// [Permanent] error, and an error the policy does not retry.
//
// An error made with [After] stops the hedging of its round: no further
// hedge of that round starts once its attempt returns. So a server's
// Retry-After holds back every hedge not yet started.
//
// When ctx ends during a round, the call cancels the attempts still
// running. It waits for them to return, as Do waits for its attempt. The
// call's last error is then chosen as [Error].Last says: an attempt's own
// error wins over the previous round's, and an attempt that returned only
// the context's error leaves the failure before it.
//
// # Limits and the guard
//
// Every hedge counts as an attempt for the policy's attempt limit. No
// hedge starts if its delay would end after ctx's deadline or past the
// policy's time limit. No hedge starts on the context of a request that is
// already a retry, behind retryhttp.Handler or retrygrpc's server
// interceptors (see docs/layers.md).
//
// With a guard, a hedge starts only while the guard holds more than nine
// tenths of its capacity. It takes a token as it starts (see
// policy.Guard). A hedge that loses keeps that token, so hedges that never
// win stop. An attempt that succeeds only after the hedge delay does not
// refill the guard above that line. So a dependency that slows down as a
// whole stops getting hedges, while retries of real failures go on.
//
// Under a guard, the duration of every successful attempt goes to the
// guard's latency estimate. It is measured on the policy's clock. A hedge
// quantile reads that estimate (see policy.Hedging).
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
// is for Do. It returns the value of the attempt that won. When the call
// fails, it returns the value of the attempt whose error it returns.
//
// It hands discard the value of every other attempt: the attempts that
// failed and were retried, and the hedges that lost, even those that
// return after the call has. So a value that owns a resource, such as an
// *http.Response and its body, is never leaked. discard gets T's zero
// value too, when an attempt returned it. A nil discard drops the values.
// A losing hedge's value may be handed over on the attempt's own
// goroutine, so discard must be safe for concurrent use. discard is an
// argument rather than an Option, so that the compiler checks that it
// takes the operation's T.
//
// The context of the attempt whose value the call returns stays open after
// the call returns. So a value bound to it stays usable: an HTTP
// response's body is read after the call. That context keeps ctx's values.
// It ends at ctx's deadline, or at the policy's attempt timeout. Once the
// call has returned, cancelling ctx no longer ends it, and ctx keeps no
// reference to it.
//
// The other attempts' contexts are cancelled:
//
//   - when their round ends;
//   - when ctx ends during a round, for every attempt still running,
//     including the one whose value the call returns;
//   - for a failed round's kept value, when the call starts to wait for the
//     next round.
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
	return &hedger{op: op, clock: clock{clk: c.p.Clock()}, timeout: c.p.AttemptTimeout(), guard: admission.Of(c.p), hooks: c.hooks}
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
