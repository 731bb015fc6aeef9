package retry

import (
	"context"
	"fmt"

	"github.com/retrykit/retrykit/policy"
)

var (
	errNilContext  = fmt.Errorf("retry: nil context: %w", ErrInvalid)
	errNilFunction = fmt.Errorf("retry: nil function: %w", ErrInvalid)
)

// Do calls fn until it succeeds, fails for good, or the policy or ctx says
// stop. It waits the policy's delay between attempts. It returns one of
// these. The same list, in the same order, is in docs/calls.md, under "How
// a call ends".
//
//   - nil on success.
//   - fn's error as it is, when fn marked it with [Permanent] or the policy
//     does not retry it. A top-level mark is removed.
//   - An [*Error] matching [ErrExhausted] and the last error, when the
//     attempt limit or the time limit ends the call. Do never starts a wait
//     that would end past the time limit. It gives up then and there. On a
//     served request's context, when it is a retry already, the first
//     failed answer of the dependency ends the call with this error.
//   - An [*Error] matching [ErrThrottled] and the last error, when the call
//     reaches its attempt or time limit while the policy's guard holds its
//     retries back. A denied retry does not end the call by itself. The call
//     waits the next delay and asks again. The denied retry uses up the
//     attempt it replaced. When ctx's deadline comes first, the call ends
//     with ctx's error instead. On a served request's context, the call does
//     not wait for a token. It ends at once with this error when its guard
//     has no whole token left.
//   - An [*Error] matching ctx's error and the last error, when ctx is done.
//     Do returns at once, even in the middle of a wait. When ctx is done
//     before the first attempt, fn is not called. When the next wait would
//     end after ctx's deadline, Do returns without waiting, with an error
//     matching context.DeadlineExceeded.
//   - An [*Error] matching [ErrHintTooLong] and the last error, at once,
//     when fn's hint from [After] asks for too long a wait. See
//     [ErrHintTooLong] for the three cases.
//   - An [*Error] matching [ErrPushback] and the last error, at once, when
//     fn's error matches ErrPushback. The server asked not to retry.
//   - An [*Error] matching [ErrShed], before fn is called, when the
//     policy's guard held the call back until a limit came first. Its Last
//     is nil. See [ErrShed].
//   - An error matching [ErrInvalid], before anything runs, for a nil ctx,
//     a nil fn or an invalid policy. For an invalid policy it matches
//     policy.ErrInvalid too.
//
// The first attempt runs at once. A zero delay retries at once, with no
// timer. A call that waits on the real clock uses one timer, however many
// times it waits. A panic in fn is not recovered.
//
// A served request's context is the one that retryhttp.Handler or
// retrygrpc's server interceptors give a handler. On it, when the request
// is a retry already, the call does not retry an answer of its dependency.
// It still retries an attempt that never reached the dependency, such as a
// refused connection. Its end is recorded for the server, by the rule of
// docs/layers.md.
//
// Time counts from the start of the call, the first attempt included. The
// time limit, [Error].Elapsed and the hooks' Elapsed all count from there. Elapsed
// is 0 when nothing times the call. A deadline, a time limit, hooks or a
// stable-run reset rule time a call. A call that nothing times does not
// read the clock for itself.
func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	if g, ok := first(ctx, fn != nil, p, opts); ok {
		if g != nil {
			defer g.Done()
		}
		err := tryFirst(ctx, fn, g)
		if err == nil {
			if g != nil {
				g.Record(false, policy.Succeeded)
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
func tryFirst(ctx context.Context, fn func(context.Context) error, g *policy.Guard) error {
	if g != nil {
		defer g.Leave()
	}
	return fn(ctx)
}

// first reports whether a call can make its first attempt before anything
// is set up: it has no options, a function, a valid policy without an
// attempt timeout, nothing times it, and the policy's guard, if any, lets
// it start. Such a call, when it succeeds, costs next to nothing; when it
// fails, the loop goes on from there. It returns the guard, to be told of
// a success.
func first(ctx context.Context, hasFn bool, p policy.Policy, opts []Option) (*policy.Guard, bool) {
	if len(opts) > 0 || !hasFn || ctx == nil || p.Validate() != nil {
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
	g := p.Guard()
	return g, g == nil || started(g)
}

// started tells g, if any, of a call about to make its first attempt, and
// reports whether the attempt may start at once. A call that must wait for
// its turn takes the general path, which waits.
func started(g *policy.Guard) bool {
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
// value of the last attempt with Do's error. So a value the operation
// returned with its error, such as a response or a partial result, is not
// lost. When no attempt ran, the value is T's zero value. The values of
// the attempts it retries are dropped. An operation whose value owns a
// resource, such as a response body, releases it before it returns an
// error. [HedgeValue] takes a cleanup for the values of its losing
// attempts instead.
//
// To retry on the value, such as a 503 response or an empty page, return
// it with an error of the operation's own. The call retries that error as
// any other. If it gives up, it still returns the value with it.
//
// The context of the attempt whose value DoValue returns is not cancelled
// when DoValue returns. So a value bound to it stays usable: a stream, an
// *sql.Rows, a response body read later. Under the policy's attempt
// timeout, that context ends at its own timeout or when ctx ends,
// whichever comes first. Without one, it ends with ctx. Under the timeout,
// it makes its timer only when something first watches it through its
// Done channel, as an operation that does I/O does. So a kept context
// that nothing watched holds no memory once the value is dropped, however
// long the timeout. One that was watched holds its timer until it ends, as
// a context of context.WithDeadline does. The context of an
// attempt the call retries is cancelled as soon as the call starts to wait
// after it. A value returned after such a wait, with [ErrThrottled] or
// ctx's error, has its context cancelled already.
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
// nil fn, or a policy without hedging given to Hedge or HedgeValue.
func refusal(noFn, hedge bool, p policy.Policy) error {
	switch {
	case noFn:
		return errNilFunction
	case hedge && unhedged(p):
		return errNoHedge
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
