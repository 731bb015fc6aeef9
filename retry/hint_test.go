//go:build go1.25

package retry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func TestHintAboveTheCapIsHonoured(t *testing.T) {
	// The server said two minutes; a cap of 300ms bounds the schedule, not
	// the server's word: coming back earlier would only be refused again.
	clk := clocktest.NewCounted()
	op := &script{errs: []error{retry.After(2*time.Minute, errFlaky)}}
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), op.op, policy.Constant(100*time.Millisecond).WithCap(300*time.Millisecond).WithClock(clk))
	}()
	require.Equal(t, 2*time.Minute, clk.Step(t))
	require.NoError(t, result(t, done))
}

func TestHintAboveTheCeilingFailsAtOnce(t *testing.T) {
	tests := []struct {
		name    string
		p       policy.Policy
		hint    time.Duration
		ceiling time.Duration
	}{
		{"default ceiling", policy.Default(), 484289 * time.Hour, (5 * time.Minute)},
		{"just above the default", policy.Default(), (5 * time.Minute) + time.Second, (5 * time.Minute)},
		{"own ceiling", policy.Default().WithMaxHint(time.Minute), 2 * time.Minute, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.NewCounted()
			op := &script{errs: []error{retry.After(tt.hint, errFlaky)}}
			err := retry.Do(context.Background(), op.op, tt.p.WithClock(clk))
			require.ErrorIs(t, err, retry.ErrHintTooLong)
			require.ErrorIs(t, err, errFlaky)
			require.ErrorIs(t, err, retry.ErrExhausted, "the hint ceiling is a limit")
			require.Zero(t, clk.Waits(), "never sleeps the hint")
			require.Equal(t, 1, int(op.calls.Load()))
			require.Contains(t, err.Error(), fmt.Sprintf("asked to wait %v, above the %v hint ceiling", tt.hint, tt.ceiling))
		})
	}
}

func TestHintAtTheCeilingIsWaited(t *testing.T) {
	clk := clocktest.NewCounted()
	op := &script{errs: []error{retry.After((5 * time.Minute), errFlaky)}}
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op.op, policy.Default().WithClock(clk)) }()
	require.Equal(t, (5 * time.Minute), clk.Step(t))
	require.NoError(t, result(t, done))
}

func TestHintReplacesTheScheduleWhichThenCarriesOn(t *testing.T) {
	clk := clocktest.NewCounted()
	op := &script{errs: []error{retry.After(time.Minute, errFlaky), errFlaky, fmt.Errorf("wrapped: %w", retry.After(3*time.Second, errFlaky))}}
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op.op, policy.Default().WithClock(clk)) }()
	require.Equal(t, time.Minute, clk.Step(t), "the hint")
	require.Equal(t, 20*time.Second, clk.Step(t), "the schedule carries on at its second delay")
	require.Equal(t, 3*time.Second, clk.Step(t), "a wrapped hint is found too")
	require.NoError(t, result(t, done))
}

func TestHintPastTheDeadlineFailsAtOnce(t *testing.T) {
	clk := clocktest.NewCounted()
	ctx, cancel := clk.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op := &script{errs: []error{retry.After(2*time.Minute, errFlaky)}}
	err := retry.Do(ctx, op.op, policy.Default().WithCap(time.Hour).WithClock(clk))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	require.ErrorIs(t, err, errFlaky)
	require.Zero(t, clk.Waits(), "no wait is started")
	require.Contains(t, err.Error(), "the hinted wait of 2m0s would not end before the deadline")
	var e *retry.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, retry.ErrHintTooLong, e.Cause, "the hint asked for the wait: Cause says so, as above the ceiling")
}

func TestHintPastTheTimeLimitFailsAtOnce(t *testing.T) {
	clk := clocktest.NewCounted()
	op := &script{errs: []error{retry.After(2*time.Minute, errFlaky)}}
	err := retry.Do(context.Background(), op.op, policy.Default().WithMaxElapsed(time.Minute).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	var e *retry.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, retry.ErrHintTooLong, e.Cause, "the hint asked for the wait past the time limit")
	require.ErrorIs(t, err, errFlaky)
	require.Zero(t, clk.Waits())
}

func TestZeroOrNegativeHintRetriesNow(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, -1 << 62} {
		clk := clocktest.NewCounted()
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

// A hint that would pass both the time limit (or the hint ceiling) and the
// deadline matches context.DeadlineExceeded too: the deadline was a limit
// it passed, whichever limit the message names.
func TestHintPastTwoLimitsMatchesTheDeadline(t *testing.T) {
	for _, tt := range []struct {
		name string
		hint time.Duration
		p    policy.Policy
	}{
		{"time limit and deadline", 5 * time.Second, policy.Constant(time.Millisecond).WithMaxElapsed(3 * time.Second)},
		{"ceiling and deadline", 10 * time.Minute, policy.Constant(time.Millisecond)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.NewCounted()
			ctx, cancel := clk.WithTimeout(context.Background(), time.Second)
			defer cancel()
			op := &script{errs: []error{retry.After(tt.hint, errFlaky)}}
			err := retry.Do(ctx, op.op, tt.p.WithClock(clk))
			require.ErrorIs(t, err, retry.ErrHintTooLong)
			require.ErrorIs(t, err, retry.ErrExhausted)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Zero(t, clk.Waits())
		})
	}
}
