package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retry/retrytest"
)

func TestBudgetBoundsRetriesAgainstADeadDependency(t *testing.T) {
	const calls = 1000
	const floor = 1.0 // retries per second, over the 10s window
	clk := retrytest.NewClock()
	p := policy.Constant(0).WithMaxAttempts(5).WithBudget(policy.NewBudget(0.1, floor)).WithClock(clk)
	var attempts, denied atomic.Int32
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			err := retry.Do(context.Background(), func(context.Context) error {
				attempts.Add(1)
				return errFlaky
			}, p)
			if errors.Is(err, retry.ErrThrottled) {
				denied.Add(1)
				if !errors.Is(err, errFlaky) {
					t.Errorf("Do() = %v, want the last error kept", err)
				}
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, int(attempts.Load()), int(1.1*calls+floor*10), "attempts")
	require.Positive(t, denied.Load())
}

func TestBudgetDeniesNothingToAHealthyDependency(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Constant(0).WithBudget(policy.NewBudget(0.1, 1)).WithClock(clk)
	var n atomic.Int32
	var wg sync.WaitGroup
	var denied atomic.Int32
	for range 1000 {
		wg.Go(func() {
			failed := false
			err := retry.Do(context.Background(), func(context.Context) error {
				// One call in twenty fails once: 5 % retries, under the 10 %.
				if !failed && n.Add(1)%20 == 0 {
					failed = true
					return errFlaky
				}
				return nil
			}, p)
			if err != nil {
				denied.Add(1)
			}
		})
	}
	wg.Wait()
	require.Zero(t, denied.Load())
}

func TestBudgetIsNotSpentOnErrorsThatAreNotRetried(t *testing.T) {
	clk := retrytest.NewClock()
	b := policy.NewBudget(0, 0.1) // exactly one retry in the window
	p := policy.Constant(0).WithBudget(b).WithClock(clk).WithRetryIf(func(err error) bool { return errors.Is(err, errFlaky) })
	errOther := errors.New("not retried")
	for range 5 {
		require.Same(t, errOther, retry.Do(context.Background(), fails(1, errOther).op, p))
	}
	require.NoError(t, retry.Do(context.Background(), fails(1, errFlaky).op, p), "the one retry is still there")
	err := retry.Do(context.Background(), fails(1, errFlaky).op, p)
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.ErrorIs(t, err, errFlaky)
	require.Contains(t, err.Error(), "retries throttled after 1 attempt")
	require.Contains(t, err.Error(), "(the retry budget is spent)")
}
