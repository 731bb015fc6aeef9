package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/plumb"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func TestGuardLearnsEveryAttempt(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	p := policy.Constant(0).WithGuard(g)
	require.NoError(t, retry.Do(context.Background(), fails(3, errFlaky).op, p))
	require.Equal(t, 10-3+0.5, g.Tokens(), "three failures and a success")
	require.NoError(t, retry.Do(context.Background(), fails(0, nil).op, p), "a first-try success")
	require.Equal(t, 8.0, g.Tokens())
	_, err := retry.DoValue(context.Background(), func(context.Context) (int, error) { return 0, errFlaky }, p.WithMaxAttempts(2))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 6.0, g.Tokens(), "the last attempt's failure counts too")
}

func TestGuardDeniesRetriesWhenFailuresDominate(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	p := policy.Constant(time.Hour).WithGuard(g) // a wait would hang the test: a denial must come at once
	require.NoError(t, retry.Do(context.Background(), fails(0, nil).op, p))
	for range 5 {
		plumb.GuardFailure(g)
	}
	op := fails(1, errFlaky)
	err := retry.Do(context.Background(), op.op, p)
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.ErrorIs(t, err, errFlaky, "the last error is kept")
	require.EqualValues(t, 1, op.calls.Load())
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 1, re.Attempts)
	require.Contains(t, err.Error(), "retries throttled after 1 attempt")
	require.Contains(t, err.Error(), "(the guard sees failures dominate)")
}

func TestGuardCountsOnlyNewsAboutTheDependency(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	errOther := errors.New("not found")
	p := policy.Constant(0).WithGuard(g).WithRetryIf(func(err error) bool { return errors.Is(err, errFlaky) })
	require.Same(t, errOther, retry.Do(context.Background(), fails(1, errOther).op, p), "an error the policy does not retry")
	require.Equal(t, 10.0, g.Tokens())
	err := retry.Do(context.Background(), fails(1, retry.Permanent(errFlaky)).op, p)
	require.ErrorIs(t, err, errFlaky)
	require.Equal(t, 10.0, g.Tokens(), "a permanent error")

	ctx, cancel := context.WithCancel(context.Background())
	err = retry.Do(ctx, func(context.Context) error { cancel(); return context.Canceled }, p.WithRetryIf(nil))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 10.0, g.Tokens(), "an attempt the caller's context cut short")
}

func TestGuardSpendsNoBudgetOnADeniedRetry(t *testing.T) {
	g := policy.NewGuard(4, 0.5)
	plumb.GuardFailure(g)
	plumb.GuardFailure(g)
	b := policy.NewBudget(0, 0.1) // exactly one retry in the window
	p := policy.Constant(0).WithGuard(g).WithBudget(b)
	err := retry.Do(context.Background(), fails(1, errFlaky).op, p)
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.Contains(t, err.Error(), "the guard sees failures dominate", "the guard, not the budget")
	require.NotContains(t, err.Error(), "budget")
	for range 6 {
		plumb.GuardSuccess(g)
	}
	require.NoError(t, retry.Do(context.Background(), fails(1, errFlaky).op, p), "the budget's one retry is still there")
}

func TestGuardAttemptTimeoutsAreFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(4, 1)
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Second).WithGuard(g)
		err := retry.Do(context.Background(), func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, p)
		require.ErrorIs(t, err, retry.ErrThrottled)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.Equal(t, 2.0, g.Tokens(), "two timed-out attempts, the second denied its retry")
	})
}

// Each run of Loop is news about the dependency; the pause after a run
// that succeeded is no retry and is never denied.
func TestGuardInLoop(t *testing.T) {
	g := policy.NewGuard(2, 0.5)
	plumb.GuardFailure(g)
	plumb.GuardFailure(g) // closed: no tokens
	runs := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := retry.Loop(ctx, func(context.Context) error {
		runs++
		if runs == 4 {
			return errFlaky
		}
		return nil
	}, policy.Constant(0).WithGuard(g))
	require.ErrorIs(t, err, retry.ErrThrottled, "three successes refill 1.5 of 2 tokens: not more than half")
	require.Equal(t, 4, runs, "the pauses after successes were not denied")
	require.Equal(t, 0.5, g.Tokens())
}

func TestGuardOnAPolicyThatIsNotValid(t *testing.T) {
	p := policy.Constant(0).WithGuard(policy.NewGuard(0, 1))
	err := retry.Do(context.Background(), fails(0, nil).op, p)
	require.ErrorIs(t, err, retry.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
}

// However many calls fail together, a full default guard lets fewer than
// capacity/2 of them retry.
func TestGuardFloorUnderConcurrentFailures(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	p := policy.Constant(0).WithMaxAttempts(4).WithGuard(g)
	const calls = 1000
	var attempts, throttled atomic.Int32
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			err := retry.Do(context.Background(), func(context.Context) error {
				attempts.Add(1)
				return errFlaky
			}, p)
			if errors.Is(err, retry.ErrThrottled) {
				throttled.Add(1)
			}
		})
	}
	wg.Wait()
	require.Less(t, float64(attempts.Load()-calls), 10/2.0, "retries")
	require.Greater(t, throttled.Load(), int32(calls-5))
	require.Zero(t, g.Tokens())
}
