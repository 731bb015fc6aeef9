package retry

import (
	"context"
	"fmt"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

var (
	errNilContext  = fmt.Errorf("retry: nil context: %w", policy.ErrInvalid)
	errNilFunction = fmt.Errorf("retry: nil function: %w", policy.ErrInvalid)
)

// Do calls fn until it succeeds, returns an error that is not to be
// retried, reaches a limit of the policy, or ctx ends. The first attempt
// runs at once; later ones wait the policy's delay.
//
// Do returns nil on success, and fn's error as it is when fn marked it
// [Permanent] or the policy does not retry it. Otherwise it returns an
// [*Error] that matches the reason and the last error: [ErrExhausted] when
// a limit ended the call, ctx's error when ctx did. docs/calls.md lists
// every way a call ends.
//
// Time limits count from the start of the call, the first attempt
// included. A call waits on one timer, however many times it waits, and a
// zero delay retries with no timer at all.
func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	if g, ok := first(ctx, fn != nil, p, opts); ok {
		if g != nil {
			defer g.Done()
		}
		err := tryFirst(ctx, fn, g)
		if err == nil {
			if g != nil {
				g.Record(false, admit.Succeeded)
			}
			return nil
		}
		var c call
		c.init(ctx, p, &hookSet{}, false, nil) // cannot fail: first checked it all
		c.attempts, c.count = 1, 1
		return c.runFrom(fn, err)
	}
	return run(ctx, fn, p, opts, false)
}

// tryFirst makes the first attempt of Do's fast path. The guard, if any,
// counts it as running until it returns, a panic included.
func tryFirst(ctx context.Context, fn func(context.Context) error, g *admit.Guard) error {
	if g != nil {
		defer g.Leave()
	}
	return fn(ctx)
}

// first reports whether a call can make its first attempt before anything
// is set up: it has no options, a function, a valid policy without an
// attempt timeout, it reads no clock, its context carries no other call's
// attempt number (see Attempt), and the policy's guard, if any, lets it
// start. Such a call, when it succeeds, costs next to nothing; when it
// fails, the loop goes on from there. It returns the guard, to be told of
// a success.
func first(ctx context.Context, hasFn bool, p policy.Policy, opts []Option) (*admit.Guard, bool) {
	if len(opts) > 0 || !hasFn || ctx == nil || p.Validate() != nil || carriesAttempt(ctx) {
		return nil, false
	}
	if p.AttemptTimeout() > 0 || p.MaxElapsed() > 0 || p.ResetRule().AfterStableRun > 0 {
		return nil, false
	}
	if ctx.Done() != nil { // a context that is never done has no deadline either
		if _, deadline := ctx.Deadline(); deadline || ctx.Err() != nil {
			return nil, false
		}
	}
	g := admission.Of(p)
	return g, g == nil || started(g)
}

// started tells g, if any, of a call about to make its first attempt, and
// reports whether the attempt may start at once. A call that must wait for
// its turn takes the general path, which waits.
func started(g *admit.Guard) bool {
	if g == nil {
		return true
	}
	if g.Held() {
		return false
	}
	g.Start()
	if t := g.Enter(); t != nil {
		g.Abandon(t)
		g.Done()
		return false
	}
	return true
}

// DoValue is [Do] for an operation that returns a value. It returns the
// value of the last attempt with Do's error, so a value returned beside an
// error, such as a response or a partial result, is not lost. When no
// attempt ran, the value is T's zero value.
//
// The values of retried attempts are dropped: an operation whose value
// owns a resource, such as a response body, must release it before it
// returns an error. ([HedgeValue] takes a function that releases them.)
//
// To retry on the value, such as a job still pending, return it with an
// error of your own. The call retries that error as any other.
//
// The context of the attempt whose value DoValue returns stays open until
// ctx ends or the policy's attempt timeout passes, so a value bound to it,
// such as an *sql.Rows or a response body, stays usable. Kept, it holds no
// memory until something watches it.
func DoValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts ...Option) (T, error) {
	var v T
	var c call
	o := collect(opts)
	if err := c.init(ctx, p, &o.hooks, false, refusal(fn == nil, false, p)); err != nil {
		return v, err
	}
	c.keep = true
	err := c.run(func(ctx context.Context) error {
		var err error
		v, err = fn(ctx)
		return err
	})
	return v, err
}

// refusal returns why a call is refused before anything runs, or nil: a
// nil fn, or a policy given to Hedge or HedgeValue without hedging, or with
// a hedge quantile and no guard.
func refusal(noFn, hedge bool, p policy.Policy) error {
	switch {
	case noFn:
		return errNilFunction
	case hedge && unhedged(p):
		return errNoHedge
	case hedge && unguarded(p):
		return errNoGuard
	}
	return nil
}

// run runs a Do call (loop false) or a Loop call (loop true).
func run(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts []Option, loop bool) error {
	o := collect(opts)
	var c call
	if err := c.init(ctx, p, &o.hooks, loop, refusal(fn == nil, false, p)); err != nil {
		return err
	}
	return c.run(fn)
}
