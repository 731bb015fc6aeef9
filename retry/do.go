package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
)

var (
	errNilContext  = fmt.Errorf("retry: nil context: %w", ErrInvalid)
	errNilFunction = fmt.Errorf("retry: nil function: %w", ErrInvalid)
)

// Do calls fn until it returns nil, returns an error the policy does not
// retry, or the policy or ctx says stop, waiting the policy's delay between
// attempts. It returns:
//
//   - nil on success;
//   - fn's error as it is when the policy does not retry it or it was
//     marked with [Permanent] (without the mark);
//   - an [*Error] matching [ErrExhausted] and the last error when the attempt
//     or time limit ends the call; Do never starts a wait that would end past
//     the time limit, it gives up then and there;
//   - an [*Error] matching ctx's error and the last error when ctx is done:
//     before the first attempt (fn is then not called), or during a wait
//     (Do returns at once, not when the timer fires); and one matching
//     context.DeadlineExceeded when the next wait would end after ctx's
//     deadline, without waiting;
//   - an error matching [ErrInvalid] before anything runs, for a nil ctx, a
//     nil fn or an invalid policy.
//
// The first attempt runs at once. A zero delay retries at once with no
// timer, and a call that waits uses at most one timer. A panic in fn is not
// recovered.
func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy) error {
	if fn == nil {
		return errNilFunction
	}
	start, err := begin(ctx, p)
	if err != nil {
		return err
	}
	if err = fn(ctx); err == nil {
		return nil
	}
	return retryAfter(ctx, fn, p, start, err)
}

// DoValue is [Do] for an operation that returns a value. It returns the
// value of the last attempt with the error of Do, so that a value the
// operation returned with its error is not lost; when no attempt ran it is
// T's zero value.
func DoValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy) (T, error) {
	var v T
	if fn == nil {
		return v, errNilFunction
	}
	start, err := begin(ctx, p)
	if err != nil {
		return v, err
	}
	if v, err = fn(ctx); err == nil {
		return v, nil
	}
	err = retryAfter(ctx, func(ctx context.Context) error {
		var err error
		v, err = fn(ctx)
		return err
	}, p, start, err)
	return v, err
}

// begin checks the call before the first attempt and returns the start time
// when the policy needs it that early (a time limit); otherwise the clock is
// first read after a failure, so that a first-try success reads none.
func begin(ctx context.Context, p policy.Policy) (start time.Time, err error) {
	if ctx == nil {
		return start, errNilContext
	}
	if err := p.Validate(); err != nil {
		return start, &invalidCallError{err: err}
	}
	if err := ctx.Err(); err != nil {
		return start, stopped(ctx, err, 0, 0, nil)
	}
	if p.MaxElapsed() > 0 {
		start = now(p.Clock())
	}
	return start, nil
}

// retryAfter runs the retries after a failed first attempt. It is kept out
// of Do so that the first-try path stays small.
func retryAfter(ctx context.Context, fn func(context.Context) error, p policy.Policy, start time.Time, err error) error {
	clk := p.Clock()
	if start.IsZero() {
		start = now(clk)
	}
	maxAttempts, maxElapsed := p.MaxAttempts(), p.MaxElapsed()
	_, hasDeadline := ctx.Deadline()
	var w waiter
	defer w.stop()
	for attempt := 1; ; attempt++ {
		if isPermanent(err) {
			if pe, ok := err.(*permanentError); ok {
				return pe.err
			}
			return err
		}
		if !p.Retryable(err) {
			return err
		}
		if maxAttempts > 0 && attempt >= maxAttempts {
			return &Error{Attempts: attempt, Elapsed: now(clk).Sub(start), Last: err, Cause: ErrExhausted}
		}
		d := p.Delay(attempt)
		if maxElapsed > 0 || hasDeadline {
			t := now(clk)
			if maxElapsed > 0 && t.Sub(start)+d > maxElapsed {
				return &Error{Attempts: attempt, Elapsed: t.Sub(start), Last: err, Cause: ErrExhausted,
					detail: fmt.Sprintf("the next wait of %v would pass the %v limit", d, maxElapsed)}
			}
			if deadline, ok := ctx.Deadline(); ok && !t.Add(d).Before(deadline) {
				e := stopped(ctx, context.DeadlineExceeded, attempt, t.Sub(start), err)
				e.detail = fmt.Sprintf("the next wait of %v would end after the deadline", d)
				return e
			}
		}
		if d > 0 {
			if werr := w.wait(ctx, clk, d); werr != nil {
				return stopped(ctx, werr, attempt, now(clk).Sub(start), err)
			}
		} else if cerr := ctx.Err(); cerr != nil {
			return stopped(ctx, cerr, attempt, now(clk).Sub(start), err)
		}
		if err = fn(ctx); err == nil {
			return nil
		}
	}
}

// stopped builds the error for a call that ctx (or its deadline) ended.
func stopped(ctx context.Context, cause error, attempts int, elapsed time.Duration, last error) *Error {
	e := &Error{Attempts: attempts, Elapsed: elapsed, Last: last, Cause: cause}
	if c := context.Cause(ctx); c != nil && c != cause && c != ctx.Err() {
		e.ctxCause = c
	}
	return e
}

func now(clk policy.Clock) time.Time {
	if clk == nil {
		return time.Now()
	}
	return clk.Now()
}

// waiter waits out delays: on the real clock with one timer for the whole
// call, reset between waits; on a policy's clock with its After.
type waiter struct {
	timer *time.Timer
}

func (w *waiter) wait(ctx context.Context, clk policy.Clock, d time.Duration) error {
	var fired <-chan time.Time
	switch {
	case clk != nil:
		fired = clk.After(d)
	case w.timer == nil:
		w.timer = time.NewTimer(d)
		fired = w.timer.C
	default:
		// Since Go 1.23 Reset leaves no stale tick behind in the channel.
		w.timer.Reset(d)
		fired = w.timer.C
	}
	select {
	case <-fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *waiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
