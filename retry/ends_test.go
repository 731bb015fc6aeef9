//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// sentinels are every error a test of how a call ends may look for.
var sentinels = []error{
	retry.ErrExhausted, retry.ErrThrottled, retry.ErrShed, retry.ErrHintTooLong,
	retry.ErrPushback, retry.ErrAttemptTimeout, policy.ErrInvalid,
	context.Canceled, context.DeadlineExceeded,
}

// end is one way a call ends, a row of the list in docs/calls.md under
// "How a call ends", set up for a call through Do or Hedge.
type end struct {
	name string
	// setup returns the call's context, policy and operation. It runs inside
	// the test's bubble, so its timers and guards are on the bubble's clock.
	setup func(t *testing.T) (context.Context, policy.Policy, func(context.Context) error)
	// is lists what errors.Is finds in the call's error; every other error of
	// sentinels (and errFlaky) it must not find.
	is []error
	// attempts is the *retry.Error's Attempts; -1 when the error is none.
	attempts int
	// ctxLive says the call ends before its context does.
	ctxLive bool
}

// fail is an operation that always fails with errFlaky.
func fail(context.Context) error { return errFlaky }

// blocked is an operation that waits for its context to end, and returns
// the context's error.
func blocked(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// cancelAt returns a context that is cancelled d from now.
func cancelAt(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(d, cancel)
	t.Cleanup(cancel)
	return ctx
}

// timeoutIn returns a context whose deadline is d from now.
func timeoutIn(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ends lists the ways a call ends, in the order of docs/calls.md.
func ends() []end {
	bg := func(*testing.T) context.Context { return context.Background() }
	with := func(ctx func(*testing.T) context.Context, p policy.Policy, op func(context.Context) error) func(*testing.T) (context.Context, policy.Policy, func(context.Context) error) {
		return func(t *testing.T) (context.Context, policy.Policy, func(context.Context) error) { return ctx(t), p, op }
	}
	every := policy.Constant(100 * time.Millisecond)
	return []end{
		{name: "success", setup: with(bg, every, succeed), attempts: -1},
		{name: "final: Permanent", setup: with(bg, every, func(context.Context) error { return retry.Permanent(errFlaky) }),
			is: []error{errFlaky}, attempts: -1},
		{name: "final: not retried by the policy", setup: with(bg, every.WithRetryIf(func(error) bool { return false }), fail),
			is: []error{errFlaky}, attempts: -1},
		{name: "limit: attempts", setup: with(bg, every.WithMaxAttempts(3), fail),
			is: []error{retry.ErrExhausted, errFlaky}, attempts: 3},
		{name: "limit: time", setup: with(bg, every.WithMaxElapsed(250*time.Millisecond), fail),
			is: []error{retry.ErrExhausted, errFlaky}, attempts: 3},
		{name: "limit: the next wait would pass the deadline",
			setup:    with(func(t *testing.T) context.Context { return timeoutIn(t, 250*time.Millisecond) }, every, fail),
			is:       []error{retry.ErrExhausted, context.DeadlineExceeded, errFlaky},
			attempts: 3, ctxLive: true},
		{name: "limit: while the guard held the retries back", setup: func(t *testing.T) (context.Context, policy.Policy, func(context.Context) error) {
			g := policy.NewGuard(10, 0.5)
			drain(g)
			busy(t, g)
			return context.Background(), every.WithMaxAttempts(3).WithGuard(g), fail
		}, is: []error{retry.ErrThrottled, retry.ErrExhausted, errFlaky}, attempts: 2}, // the first attempt, and the guard's probe of the second
		{name: "limit: a hint above the ceiling",
			setup: with(bg, every, func(context.Context) error { return retry.After(10*time.Minute, errFlaky) }),
			is:    []error{retry.ErrHintTooLong, retry.ErrExhausted, errFlaky}, attempts: 1},
		{name: "limit: a hint past the deadline",
			setup: with(func(t *testing.T) context.Context { return timeoutIn(t, time.Hour) }, every.WithMaxHint(3*time.Hour),
				func(context.Context) error { return retry.After(2*time.Hour, errFlaky) }),
			is: []error{retry.ErrHintTooLong, retry.ErrExhausted, context.DeadlineExceeded, errFlaky}, attempts: 1, ctxLive: true},
		{name: "limit: held back before the first attempt", setup: func(t *testing.T) (context.Context, policy.Policy, func(context.Context) error) {
			g := policy.NewGuard(50, 1)
			stalled(t, g)
			return context.Background(), every.WithMaxAttempts(3).WithGuard(g), fail
		}, is: []error{retry.ErrShed, retry.ErrExhausted}, attempts: 0},
		{name: "context: cancelled in a wait", setup: with(func(t *testing.T) context.Context { return cancelAt(t, 150*time.Millisecond) }, every, fail),
			is: []error{context.Canceled, errFlaky}, attempts: 2},
		{name: "context: the deadline passed in an attempt",
			setup: with(func(t *testing.T) context.Context { return timeoutIn(t, 50*time.Millisecond) }, every,
				func(ctx context.Context) error { <-ctx.Done(); return errFlaky }),
			is: []error{context.DeadlineExceeded, errFlaky}, attempts: 1},
		{name: "context: cancelled while held back", setup: func(t *testing.T) (context.Context, policy.Policy, func(context.Context) error) {
			g := policy.NewGuard(50, 1)
			stalled(t, g)
			return cancelAt(t, 150*time.Millisecond), every.WithGuard(g), fail
		}, is: []error{retry.ErrShed, context.Canceled}, attempts: 0},
		{name: "pushback", setup: with(bg, every, func(context.Context) error { return fmt.Errorf("%w: %w", retry.ErrPushback, errFlaky) }),
			is: []error{retry.ErrPushback, errFlaky}, attempts: 1},
		{name: "invalid policy", setup: with(bg, policy.Constant(-1), fail), is: []error{policy.ErrInvalid}, attempts: -1},
		{name: "invalid: nil function", setup: with(bg, every, nil), is: []error{policy.ErrInvalid}, attempts: -1},
		// An attempt timeout does not end a call; a limit after it does, and
		// the last error says the attempt timed out. Its own context passed
		// its deadline, so it matches context.DeadlineExceeded too.
		{name: "limit: attempts, after attempt timeouts", setup: with(bg, every.WithMaxAttempts(2).WithAttemptTimeout(50*time.Millisecond), blocked),
			is: []error{retry.ErrExhausted, retry.ErrAttemptTimeout, context.DeadlineExceeded}, attempts: 2, ctxLive: true},
	}
}

// TestHowACallEnds runs every way a call ends through Do and Hedge, and
// checks the sentinels its error matches and those it does not.
func TestHowACallEnds(t *testing.T) {
	calls := map[string]func(context.Context, func(context.Context) error, policy.Policy) error{
		"Do": func(ctx context.Context, op func(context.Context) error, p policy.Policy) error {
			return retry.Do(ctx, op, p)
		},
		"Hedge": func(ctx context.Context, op func(context.Context) error, p policy.Policy) error {
			return retry.Hedge(ctx, op, p.WithHedging(policy.Hedging{Delay: time.Hour}))
		},
	}
	for _, e := range ends() {
		for via, call := range calls {
			t.Run(via+"/"+e.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, p, op := e.setup(t)
					var ran atomic.Int32
					if op != nil {
						inner := op
						op = func(ctx context.Context) error { ran.Add(1); return inner(ctx) }
					}
					err := call(ctx, op, p)
					checkEnd(t, e, err)
					if e.ctxLive {
						require.NoError(t, ctx.Err(), "the call ended before its context")
					}
					if errors.Is(err, retry.ErrShed) {
						require.Zero(t, ran.Load(), "a call held back never runs")
					}
				})
			})
		}
	}
}

// checkEnd checks err, the error of a call that ended as e says.
func checkEnd(t *testing.T, e end, err error) {
	t.Helper()
	if len(e.is) == 0 {
		require.NoError(t, err)
		return
	}
	for _, want := range e.is {
		require.ErrorIs(t, err, want)
	}
	for _, other := range append(sentinels, errFlaky) {
		if !contains(e.is, other) {
			require.NotErrorIs(t, err, other)
		}
	}
	var re *retry.Error
	if e.attempts < 0 {
		require.False(t, errors.As(err, &re), "%v is no *retry.Error", err)
		return
	}
	require.ErrorAs(t, err, &re)
	require.Equal(t, e.attempts, re.Attempts, "Attempts of %v", err)
}

func contains(errs []error, err error) bool {
	for _, e := range errs {
		if e == err {
			return true
		}
	}
	return false
}

// In a Loop, Error.Attempts means what it means in Do: the attempts (runs)
// in the run of failures that ended the call, the first included. A run
// that succeeds ends a run of failures, so the runs before it do not count.
func TestLoopAttemptsAreTheRunOfFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := []error{errFlaky, errFlaky, nil, errFlaky, errFlaky, errFlaky}
		n := 0
		err := retry.Loop(context.Background(), func(context.Context) error {
			n++
			return script[n-1]
		}, policy.Constant(time.Second).WithMaxAttempts(3))
		require.ErrorIs(t, err, retry.ErrExhausted)
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 3, re.Attempts, "the three failed runs after the success, the first of them included")
		require.Equal(t, 6, n)
		require.Contains(t, err.Error(), "after 3 failed runs in a row (6 runs in all)")
	})
}

// A Loop's context is its lifetime, not a limit: a Loop whose next pause
// would pass the deadline ends as one whose context ended, after a failed
// run as after a successful one.
func TestLoopDeadlineIsNoLimit(t *testing.T) {
	for _, runErr := range []error{errFlaky, nil} {
		t.Run(fmt.Sprint(runErr), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := timeoutIn(t, 2500*time.Millisecond)
				err := retry.Loop(ctx, func(context.Context) error { return runErr }, policy.Constant(time.Second))
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.NotErrorIs(t, err, retry.ErrExhausted)
			})
		})
	}
}
