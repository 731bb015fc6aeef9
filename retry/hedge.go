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

// Hedge is [Do] for an operation that is safe to run twice at once, such as
// a read or an idempotent write. It retries failures as Do does, and also
// starts another attempt beside one that is slow to return, as the policy's
// hedging says (policy.Policy.WithHedging). Do never hedges: calling Hedge
// is how the caller says the operation may run twice at once.
//
// Hedge returns what Do returns. A policy without hedging, or with a hedge
// quantile and no guard, is an error matching policy.ErrInvalid. fn must be
// safe for concurrent use and must not panic: each attempt runs on a
// goroutine of its own, where a panic ends the program.
//
// # Rounds
//
// Hedge runs in rounds. A round starts one attempt, then another after each
// hedge delay while none has succeeded, up to the hedging's MaxInFlight.
// The first success wins: the call returns at once and cancels the others.
// A failure ends the round only when no attempt of it still runs; the round
// then counts as one failed attempt of Do, with the error of the last
// attempt to fail, or the last one that asked for a wait with [After]. A
// [Permanent] error, or one the policy does not retry, ends the call at
// once. An error made with After stops the round's hedging.
//
// Every hedge counts toward the attempt limit. No hedge starts when its
// delay would pass ctx's deadline or the time limit. Under a guard, a hedge
// starts only while the guard is nearly full, and takes a token, so hedges
// that never win stop (see policy.Guard). docs/hedging.md has the details.
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
// is for Do. It returns the value of the attempt that won or, when the call
// fails, of the attempt whose error it returns.
//
// Every other attempt's value goes to discard, the hedges that lost
// included, even after the call returned: so a value that owns a resource,
// such as an *http.Response, is never leaked. discard may run on an
// attempt's own goroutine and must be safe for concurrent use. A nil
// discard drops the values.
//
// The context of the attempt whose value the call returns stays open, so
// a response body can be read after the call. It keeps ctx's values and
// ends at ctx's deadline or the policy's attempt timeout; once the call
// has returned, cancelling ctx no longer ends it. The contexts of the other
// attempts are cancelled when their round ends.
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
