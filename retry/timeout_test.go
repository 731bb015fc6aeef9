//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// hanger is an operation whose first hangs attempts block until their
// context ends; later attempts succeed.
type hanger struct {
	hangs   int
	started chan int
	calls   int
}

func (h *hanger) op(ctx context.Context) error {
	h.calls++
	h.started <- h.calls
	if h.calls <= h.hangs {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func TestAttemptTimeoutCutsOffAHangingAttemptAndRetries(t *testing.T) {
	clk := retrytest.NewClock()
	h := &hanger{hangs: 1, started: make(chan int, 10)}
	p := policy.Constant(time.Second).WithAttemptTimeout(5 * time.Second).WithClock(clk)
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), h.op, p) }()

	require.Equal(t, 1, <-h.started)
	clk.Add(5 * time.Second) // the attempt's own deadline, in mock time
	require.Equal(t, time.Second, clk.Step(t), "the cut-off attempt is retried after the back-off")
	require.Equal(t, 2, <-h.started)
	require.NoError(t, result(t, done))
}

func TestAttemptTimeoutSaysWhichHappened(t *testing.T) {
	clk := retrytest.NewClock()
	h := &hanger{hangs: 100, started: make(chan int, 10)}
	p := policy.Constant(time.Second).WithAttemptTimeout(5 * time.Second).WithMaxAttempts(2).WithClock(clk)
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), h.op, p) }()
	<-h.started
	clk.Add(5 * time.Second)
	clk.Step(t)
	<-h.started
	clk.Add(5 * time.Second)
	err := result(t, done)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, retry.ErrAttemptTimeout, "the last attempt was cut off by its own timeout")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "attempt timed out after 5s")
}

func TestParentCancelDuringAnAttemptIsNotAnAttemptTimeout(t *testing.T) {
	clk := retrytest.NewClock()
	h := &hanger{hangs: 100, started: make(chan int, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(ctx, h.op, policy.Constant(time.Second).WithAttemptTimeout(5*time.Second).WithClock(clk))
	}()
	<-h.started
	cancel()
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, retry.ErrAttemptTimeout)
	require.Equal(t, 1, h.calls)
}

func TestAttemptTimeoutOnTheRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hanger{hangs: 2, started: make(chan int, 10)}
		start := time.Now()
		err := retry.Do(t.Context(), h.op, policy.Constant(time.Second).WithAttemptTimeout(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 3, h.calls)
		require.Equal(t, 2*time.Minute+2*time.Second, time.Since(start))
	})
}

// An attempt timeout longer than the time left is not what ends an attempt
// that the caller's deadline cuts off: the call ends as its context ending
// does, with its cause, and neither as a limit nor as an attempt timeout.
func TestCallerDeadlineBeforeTheAttemptTimeout(t *testing.T) {
	errCause := errors.New("budget spent")
	p := policy.Constant(10 * time.Millisecond).WithMaxAttempts(5).WithAttemptTimeout(time.Second)
	for name, run := range map[string]func(context.Context, func(context.Context) error) error{
		"Do": func(ctx context.Context, op func(context.Context) error) error { return retry.Do(ctx, op, p) },
		"Hedge": func(ctx context.Context, op func(context.Context) error) error {
			return retry.Hedge(ctx, op, p.WithHedging(policy.Hedging{Delay: time.Hour}))
		},
	} {
		t.Run(name, func(t *testing.T) {
			for range 100 {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithTimeoutCause(context.Background(), 30*time.Millisecond, errCause)
					defer cancel()
					err := run(ctx, func(ctx context.Context) error {
						<-ctx.Done()
						return ctx.Err()
					})
					var re *retry.Error
					require.ErrorAs(t, err, &re)
					require.Equal(t, context.DeadlineExceeded, re.Cause, "%v", err)
					require.ErrorIs(t, err, errCause)
					require.NotErrorIs(t, err, retry.ErrExhausted)
					require.NotErrorIs(t, err, retry.ErrAttemptTimeout)
				})
			}
		})
	}
}
