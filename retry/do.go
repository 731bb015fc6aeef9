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

// Do calls fn until it succeeds, fails for good, or the policy or ctx says
// stop. It waits the policy's delay between attempts. It returns nil on
// success. It returns fn's error as it is when fn marked it with
// [Permanent] or the policy does not retry it. Otherwise it returns an
// [*Error] that matches the reason and the last error: [ErrExhausted] when
// a limit ended the call, ctx's error when ctx did. docs/calls.md, under
// "How a call ends", lists every way a call ends and the sentinels each
// matches. Bad input (a nil ctx or fn, an invalid policy) is an error
// matching policy.ErrInvalid, before anything runs.
//
// The first attempt runs at once. A zero delay retries at once, with no
// timer. A call that waits on the real clock uses one timer, however many
// times it waits. A panic in fn is not recovered.
//
// On the context of a request behind retryhttp.Handler or retrygrpc's
// server interceptors, a call may retry less, by the rule of docs/layers.md.
//
// Time counts from the start of the call, the first attempt included. The
// time limit, [Error].Elapsed and the hooks' Elapsed all count from there.
// [Error].Elapsed says when a call reads no clock at all.
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
// value of the last attempt, with Do's error. So a value the operation
// returned with its error, such as a response or a partial result, is not
// lost. When no attempt ran, the value is T's zero value.
//
// The values of retried attempts are dropped. So an operation whose value
// owns a resource, such as a response body, must release it before it
// returns an error. ([HedgeValue] instead takes a function that releases
// the values it drops.)
//
// To retry on the value, such as a 503 response or an empty page, return
// it with an error of the operation's own. The call retries that error as
// any other. If it gives up, it still returns the value with it.
//
// The context of the attempt whose value DoValue returns stays open after
// DoValue returns. So a value bound to it stays usable: a stream, an
// *sql.Rows, a response body read later. That context ends when ctx ends,
// or at the policy's attempt timeout, whichever comes first.
//
// A kept context costs no memory until something watches it. Under an
// attempt timeout, the context starts its timer only when its Done channel
// is first used, as an operation that does I/O uses it. A kept context
// that nothing watched holds no memory once the value is dropped, however
// long the timeout. One that was watched holds its timer until it ends,
// as a context from context.WithDeadline does.
//
// The context of a retried attempt is cancelled when the call starts to
// wait after it. So a value returned after such a wait, with
// [ErrThrottled] or ctx's error, has its context cancelled already.
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
