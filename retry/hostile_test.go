//go:build go1.25

package retry_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

func TestHostileCalls(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want error // nil: the call succeeds
	}{
		{"Do nil fn", func() error { return retry.Do(ctx, nil, policy.Default()) }, policy.ErrInvalid},
		{"Do nil ctx", func() error { return retry.Do(nilContext, succeed, policy.Default()) }, policy.ErrInvalid},
		{"Loop nil ctx", func() error { return retry.Loop(nilContext, succeed, policy.Default()) }, policy.ErrInvalid},
		{"DoValue nil ctx", func() error { _, err := retry.DoValue(nilContext, succeedValue, policy.Default()); return err }, policy.ErrInvalid},
		{"invalid policy", func() error { return retry.Do(ctx, succeed, policy.Exponential(-1)) }, policy.ErrInvalid},
		{"nil hooks", func() error { return retry.Do(ctx, succeed, policy.Default(), retry.WithHooks(nil)) }, nil},
		{"empty hooks", func() error {
			return retry.Do(ctx, fails(2, errFlaky).op, policy.Constant(0), retry.WithHooks(&retry.Hooks{}))
		}, nil},
		{"nil Option", func() error { return retry.Do(ctx, succeed, policy.Default(), nil) }, nil},
		{"nil Option to DoValue", func() error {
			_, err := retry.DoValue(ctx, succeedValue, policy.Default(), nil)
			return err
		}, nil},
		{"zero Policy", func() error { return retry.Do(ctx, succeed, policy.Policy{}) }, policy.ErrInvalid},
		{"attempts MaxInt", func() error {
			return retry.Do(ctx, fails(3, errFlaky).op, policy.Constant(0).WithMaxAttempts(math.MaxInt))
		}, nil},
		{"huge hint under a time limit does not overflow", func() error {
			clk := retrytest.NewClock()
			return retry.Do(ctx, func(context.Context) error {
				clk.Add(time.Second) // elapsed > 0, so elapsed+hint would wrap
				return retry.After(math.MaxInt64, errFlaky)
			}, policy.Exponential(time.Second).WithMaxElapsed(time.Hour).WithClock(clk))
		}, retry.ErrHintTooLong},
		{"huge delay past a deadline", func() error {
			ctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			return retry.Do(ctx, fails(1, errFlaky).op, policy.Constant(math.MaxInt64))
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tt.run() })
			if tt.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.want)
			}
		})
	}
}

// nilContext is hostile input: a nil context, which Do must refuse with an
// error rather than a panic.
var nilContext context.Context

func TestGoWithNilGroupPanicsAtOnce(t *testing.T) {
	require.PanicsWithValue(t, "retry: Go: nil *errgroup.Group", func() {
		retry.Go(context.Background(), nil, succeed, policy.Default())
	})
}

func TestTypedNilScheduleIsInvalidNotAPanic(t *testing.T) {
	calls := 0
	err := retry.Do(context.Background(), func(context.Context) error { calls++; return errFlaky },
		policy.Custom(backoff.ScheduleFunc(nil)))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.Zero(t, calls)
}
