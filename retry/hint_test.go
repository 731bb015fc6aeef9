package retry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retry/retrytest"
)

func TestHintClampedToTheCap(t *testing.T) {
	clk := retrytest.NewClock()
	op := &script{errs: []error{retry.After(2*time.Hour, errFlaky)}}
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), op.op, policy.Default().WithCap(5*time.Minute).WithClock(clk))
	}()
	require.Equal(t, 5*time.Minute, clk.Step(t))
	require.NoError(t, result(t, done))
}

func TestHintReplacesTheScheduleWhichThenCarriesOn(t *testing.T) {
	clk := retrytest.NewClock()
	op := &script{errs: []error{retry.After(time.Minute, errFlaky), errFlaky, fmt.Errorf("wrapped: %w", retry.After(3*time.Second, errFlaky))}}
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op.op, policy.Default().WithClock(clk)) }()
	require.Equal(t, time.Minute, clk.Step(t), "the hint")
	require.Equal(t, 20*time.Second, clk.Step(t), "the schedule carries on at its second delay")
	require.Equal(t, 3*time.Second, clk.Step(t), "a wrapped hint is found too")
	require.NoError(t, result(t, done))
}

func TestHintPastTheDeadlineFailsAtOnce(t *testing.T) {
	clk := retrytest.NewClock()
	ctx, cancel := clk.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op := &script{errs: []error{retry.After(2*time.Minute, errFlaky)}}
	err := retry.Do(ctx, op.op, policy.Default().WithCap(time.Hour).WithClock(clk))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	require.ErrorIs(t, err, errFlaky)
	require.Zero(t, clk.Waits(), "no wait is started")
	require.Contains(t, err.Error(), "the next wait of 2m0s would end after the deadline")
}

func TestHintPastTheTimeLimitFailsAtOnce(t *testing.T) {
	clk := retrytest.NewClock()
	op := &script{errs: []error{retry.After(2*time.Minute, errFlaky)}}
	err := retry.Do(context.Background(), op.op, policy.Default().WithMaxElapsed(time.Minute).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	require.ErrorIs(t, err, errFlaky)
	require.Zero(t, clk.Waits())
}

func TestZeroOrNegativeHintRetriesNow(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, -1 << 62} {
		clk := retrytest.NewClock()
		op := &script{errs: []error{retry.After(d, errFlaky), retry.After(d, errFlaky)}}
		err := retry.Do(context.Background(), op.op, policy.Default().WithClock(clk))
		require.NoError(t, err, "hint %v", d)
		require.Equal(t, 3, int(op.calls.Load()))
		require.Zero(t, clk.Waits(), "hint %v: retried at once, no timer", d)
	}
}

func TestAfterNil(t *testing.T) {
	require.NoError(t, retry.After(time.Second, nil))
	require.ErrorIs(t, retry.After(time.Second, errFlaky), errFlaky)
	require.EqualError(t, retry.After(time.Second, errFlaky), "flaky")
}

func TestPermanentWinsOverAHint(t *testing.T) {
	op := &script{errs: []error{retry.After(time.Second, retry.Permanent(errFlaky))}}
	err := retry.Do(context.Background(), op.op, policy.Default())
	require.ErrorIs(t, err, errFlaky)
	require.Equal(t, 1, int(op.calls.Load()))
}
