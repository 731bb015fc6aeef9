package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retry/retrytest"
)

var errCrash = errors.New("container exited with code 1")

func TestLoopKubeletCrashLoop(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Default().WithReset(policy.Reset{AfterStableRun: 10 * time.Minute}).WithClock(clk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var runs atomic.Int32
	stableRun := int32(9) // the run that stays up for 11 minutes before crashing
	running, crash := make(chan struct{}), make(chan struct{})
	var ev events
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, func(context.Context) error {
			if runs.Add(1) == stableRun {
				running <- struct{}{}
				<-crash
			}
			return errCrash
		}, p, retry.WithHooks(ev.hooks()))
	}()

	// Crash after crash the delay grows, then stays at the cap.
	for _, want := range []time.Duration{10, 20, 40, 80, 160, 300, 300, 300} {
		require.Equal(t, want*time.Second, clk.Step(t))
	}
	// Run 9 stays up for 11 minutes, then crashes: the back-off starts over.
	<-running
	clk.Add(11 * time.Minute)
	close(crash)
	require.Equal(t, 10*time.Second, clk.Step(t))
	require.Equal(t, 20*time.Second, clk.Step(t))
	require.Equal(t, 40*time.Second, clk.NextWait(t))
	ev.mu.Lock()
	for i, e := range ev.retries {
		require.Equal(t, i == 8, e.Reset, "retry %d: Reset", i+1)
	}
	ev.mu.Unlock()

	cancel() // mid-wait: Loop returns at once, the timer never fires
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, errCrash)
	require.Equal(t, int32(11), runs.Load())
}

func TestLoopResetsOnSuccessByDefault(t *testing.T) {
	clk := retrytest.NewClock()
	script := []error{errCrash, errCrash, errCrash, nil, errCrash, errCrash}
	var runs atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, func(context.Context) error {
			n := runs.Add(1)
			return script[min(int(n), len(script))-1]
		}, policy.Default().WithClock(clk))
	}()
	for _, want := range []time.Duration{10, 20, 40, 10, 20, 40} {
		require.Equal(t, want*time.Second, clk.Step(t))
	}
	clk.NextWait(t)
	cancel()
	require.ErrorIs(t, result(t, done), context.Canceled)
}

func TestLoopWaitsAfterSuccessTooSoItCannotSpin(t *testing.T) {
	clk := retrytest.NewClock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- retry.Loop(ctx, succeed, policy.Default().WithClock(clk)) }()
	require.Equal(t, 10*time.Second, clk.Step(t))
	require.Equal(t, 10*time.Second, clk.Step(t))
	clk.NextWait(t)
	cancel()
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.NoError(t, re.Last, "the last run succeeded")
}

func TestLoopEndsOnPermanent(t *testing.T) {
	runs := 0
	err := retry.Loop(context.Background(), func(context.Context) error {
		runs++
		if runs == 3 {
			return retry.Permanent(errCrash)
		}
		return errFlaky
	}, policy.Constant(0))
	require.Same(t, errCrash, err)
	require.Equal(t, 3, runs)
}

func TestLoopAttemptLimitCountsFromTheLastReset(t *testing.T) {
	// Five failures in a row end the loop; a success in between starts the
	// count over.
	script := []error{errCrash, errCrash, errCrash, errCrash, nil, errCrash, errCrash, errCrash, errCrash, errCrash}
	runs := 0
	err := retry.Loop(context.Background(), func(context.Context) error {
		runs++
		return script[min(runs, len(script))-1]
	}, policy.Constant(0).WithMaxAttempts(5))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errCrash)
	require.Equal(t, 10, runs)
}

func TestLoopInvalid(t *testing.T) {
	require.ErrorIs(t, retry.Loop(context.Background(), nil, policy.Default()), retry.ErrInvalid)
	require.ErrorIs(t, retry.Loop(context.Background(), succeed, policy.Constant(-1)), policy.ErrInvalid)
}
