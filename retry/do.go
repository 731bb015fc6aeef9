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
// stop, waiting the policy's delay between attempts. It returns:
//
//   - nil on success;
//   - fn's error as it is when it was marked with [Permanent] (without the
//     mark), or when the policy does not retry it;
//   - an [*Error] matching [ErrExhausted] and the last error when the attempt
//     or time limit ends the call; Do never starts a wait that would end past
//     the time limit, it gives up then and there;
//   - an [*Error] matching [ErrThrottled] and the last error when the call
//     reaches its attempt or time limit while the policy's guard holds its
//     retries back: a denied retry is waited out and asked for again after
//     the next wait, not the end of the call, but it uses up the attempt it
//     replaced (ctx's deadline gives the context's error, as always);
//   - an [*Error] matching [ErrShed], at once and before fn is called, when
//     the policy's guard holds new calls back while the dependency answers
//     nothing but overload;
//   - an [*Error] matching [ErrPushback] and the last error, at once, when
//     fn's error matches ErrPushback: the server asked not to retry;
//   - an [*Error] matching [ErrHintTooLong] and the last error, at once, when
//     fn's hint ([After]) asks for a wait above the policy's hint ceiling,
//     past the time limit or past ctx's deadline;
//   - an [*Error] matching ctx's error and the last error when ctx is done:
//     before the first attempt (fn is then not called), or during a wait
//     (Do returns at once, not when the timer fires); and one matching
//     context.DeadlineExceeded when the next wait would end after ctx's
//     deadline, without waiting;
//   - an error matching [ErrInvalid] before anything runs, for a nil ctx, a
//     nil fn or an invalid policy.
//
// The first attempt runs at once. A zero delay retries at once with no
// timer, and a call that waits on the real clock uses one timer however many
// times it waits. A panic in fn is not recovered.
//
// On a context from [Serve] whose request is a retry already, the call
// makes one attempt, and its end is recorded for the server (see [Served]).
//
// Time counts from the start of the call, the first attempt included: the
// time limit, [Error].Elapsed and the hooks' Elapsed. A call that nothing
// times (no deadline, time limit, hooks or stable-run reset rule) does not
// read the clock for itself; its Elapsed is 0.
func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	if g, ok := first(ctx, fn != nil, p, opts); ok && started(g) {
		if g != nil {
			defer g.Done()
		}
		err := fn(ctx)
		if err == nil {
			if g != nil {
				g.Record(false, policy.Succeeded)
			}
			return nil
		}
		var c call
		c.init(ctx, p, nil, false, nil) // cannot fail: first checked it all
		c.attempts, c.count = 1, 1
		return c.runFrom(fn, err)
	}
	return run(ctx, fn, p, opts, false)
}

// first reports whether a call can make its first attempt before anything
// is set up: it has no options, a function, a valid policy without an
// attempt timeout, and nothing times it. Such a call, when it succeeds,
// costs next to nothing; when it fails, the loop goes on from there.
// It returns the policy's guard, to be told of a success.
func first(ctx context.Context, hasFn bool, p policy.Policy, opts []Option) (*policy.Guard, bool) {
	if len(opts) > 0 || !hasFn || ctx == nil || p.Validate() != nil {
		return nil, false
	}
	if p.AttemptTimeout() > 0 || p.MaxElapsed() > 0 || p.ResetRule().AfterStableRun > 0 {
		return nil, false
	}
	if ctx.Done() == nil { // a context that is never done has no deadline either
		return p.Guard(), true
	}
	_, deadline := ctx.Deadline()
	return p.Guard(), !deadline && ctx.Err() == nil
}

// started tells g, if any, of a call about to make its first attempt, and
// reports whether it may. A call g holds back is no longer in flight for
// it: Do's general path says why.
func started(g *policy.Guard) bool {
	if g == nil {
		return true
	}
	if g.Start() != nil {
		g.Done()
		return false
	}
	return true
}

// DoValue is [Do] for an operation that returns a value. It returns the
// value of the last attempt with the error of Do, so that a value the
// operation returned with its error (a response, a partial result) is not
// lost; when no attempt ran it is T's zero value. The values of the
// attempts it retries are dropped: an operation whose value owns a resource
// (a response body) releases it before it returns an error. [HedgeValue]
// takes a cleanup for the values of its losing attempts.
//
// To retry on the value (a 503 response, an empty page), return it with an
// error of the operation's own: the call retries that error as any other
// and, if it gives up, still returns the value with it.
func DoValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts ...Option) (T, error) {
	var v T
	var c call
	o := collect(opts)
	if err := c.init(ctx, p, o.hooks, false, refusal(fn == nil, false, p)); err != nil {
		return v, err
	}
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
	if err := c.init(ctx, p, o.hooks, loop, refusal(fn == nil, false, p)); err != nil {
		return err
	}
	return c.run(fn)
}
