package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
	"github.com/retrykit/retrykit/policy"
)

var (
	errNilContext  = fmt.Errorf("retry: nil context: %w", ErrInvalid)
	errNilFunction = fmt.Errorf("retry: nil function: %w", ErrInvalid)
	errDiscardType = fmt.Errorf("retry: DiscardValue given to a call whose value is not of its type: %w", ErrInvalid)
)

// Do calls fn until it returns nil, returns an error the policy does not
// retry, or the policy or ctx says stop, waiting the policy's delay between
// attempts. It returns:
//
//   - nil on success;
//   - fn's error as it is when the policy does not retry it, or when it
//     was marked with [Permanent] (without the mark);
//   - an [*Error] matching [ErrExhausted] and the last error when the attempt
//     or time limit ends the call; Do never starts a wait that would end past
//     the time limit, it gives up then and there;
//   - an [*Error] matching [ErrThrottled] and the last error, at once, when
//     the policy's retry budget is spent or its guard denies the retry;
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
// times it waits. fn may return [After] to say how long to wait. A panic in
// fn is not recovered.
func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	// The first-try path: a few loads and the call, so that Do costs next
	// to nothing when nothing fails. ctx.Err is read directly here, as the
	// standard library does; later checks go through Done.
	if len(opts) == 0 && fn != nil && ctx != nil {
		if s := plumb.Of(&p); s.Simple && ctx.Err() == nil {
			err := fn(ctx)
			if err == nil {
				if s.Guard != nil {
					plumb.GuardSuccess(s.Guard)
				}
				return nil
			}
			return retryFirst(ctx, fn, p, s, err)
		}
	}
	return do(ctx, fn, p, opts, false)
}

// do runs a Do call (loop false) or a Loop call (loop true) from the start.
func do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts []Option, loop bool) error {
	o := collect(opts)
	c := call{ctx: ctx, p: p, s: plumb.Of(&p), hooks: o.hooks, loop: loop}
	if fn == nil {
		return c.finish(0, errNilFunction, time.Time{})
	}
	if o.discard != nil {
		return c.finish(0, errDiscardType, time.Time{})
	}
	if err := c.begin(); err != nil {
		return err
	}
	return c.run(fn, nil, 0)
}

// retryFirst continues a call whose first attempt, made by the quick path,
// failed with err.
func retryFirst(ctx context.Context, fn func(context.Context) error, p policy.Policy, s *plumb.Settings, err error) error {
	n, pos, err := immediate(ctx, fn, p, s, err)
	if err == nil {
		return nil
	}
	c := call{ctx: ctx, p: p, s: s, clk: s.Clock, pos: pos}
	return c.run(fn, err, n)
}

// DoValue is [Do] for an operation that returns a value. It returns the
// value of the last attempt with the error of Do, so that a value the
// operation returned with its error (a response, a partial result) is not
// lost; when no attempt ran it is T's zero value.
//
// To retry on the value (a 503 response, an empty page), return it with an
// error of the operation's own: the call retries that error as any other
// and, if it gives up, still returns the value with it.
func DoValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts ...Option) (T, error) {
	if len(opts) == 0 && fn != nil && ctx != nil {
		if s := plumb.Of(&p); s.Simple && ctx.Err() == nil {
			v, err := fn(ctx)
			if err == nil {
				if s.Guard != nil {
					plumb.GuardSuccess(s.Guard)
				}
				return v, nil
			}
			return retryValueFirst(ctx, fn, p, s, v, err)
		}
	}
	return doValue(ctx, fn, p, opts)
}

func retryValueFirst[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, s *plumb.Settings, v T, err error) (T, error) {
	c := call{ctx: ctx, p: p, s: s, clk: s.Clock}
	err = c.run(func(ctx context.Context) error {
		var err error
		v, err = fn(ctx)
		return err
	}, err, 1)
	return v, err
}

// valueCall sets up a DoValue or HedgeValue call from its options, and
// refuses a nil fn and a DiscardValue cleanup for another type than T (the
// refusal is the call's end, told to its hooks).
func valueCall[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts []Option) (call, func(T), error) {
	o := collect(opts)
	discard, ok := o.discard.(func(T))
	c := call{ctx: ctx, p: p, s: plumb.Of(&p), hooks: o.hooks}
	switch {
	case fn == nil:
		return c, nil, c.finish(0, errNilFunction, time.Time{})
	case o.discard != nil && !ok:
		return c, nil, c.finish(0, errDiscardType, time.Time{})
	}
	return c, discard, nil
}

func doValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts []Option) (T, error) {
	var v T
	c, discard, err := valueCall(ctx, fn, p, opts)
	if err != nil {
		return v, err
	}
	if err := c.begin(); err != nil {
		return v, err
	}
	ran := false
	err = c.run(func(ctx context.Context) error {
		if ran && discard != nil {
			discard(v)
		}
		var err error
		v, err = fn(ctx)
		ran = true
		return err
	}, nil, 0)
	return v, err
}
