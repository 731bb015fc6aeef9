package retry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func returnCtx(ctx context.Context) (context.Context, error) { return ctx, nil }

// TestDoValueKeepsTheReturnedAttemptsContext: the context of the attempt
// whose value DoValue returns stays alive until its own timeout.
func TestDoValueKeepsTheReturnedAttemptsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Second)
		actx, err := retry.DoValue(context.Background(), returnCtx, p)
		require.NoError(t, err)
		require.NoError(t, actx.Err(), "alive when DoValue returns")
		time.Sleep(999 * time.Millisecond)
		require.NoError(t, actx.Err(), "alive until its own timeout")
		time.Sleep(time.Millisecond)
		synctest.Wait() // the timeout's own goroutine cancels it
		require.ErrorIs(t, actx.Err(), context.DeadlineExceeded, "ended at its own timeout")
	})
}

// TestDoValueReturnedContextEndsWithTheCallers: the kept context still ends
// with the caller's.
func TestDoValueReturnedContextEndsWithTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Hour)
		actx, err := retry.DoValue(ctx, returnCtx, p)
		require.NoError(t, err)
		require.NoError(t, actx.Err())
		cancel()
		require.ErrorIs(t, actx.Err(), context.Canceled)
	})
}

// TestDoValueCancelsTheContextsOfRetriedAttempts: a failed attempt's
// context is cancelled as soon as the call waits after it; the last one,
// returned with the give-up, is kept.
func TestDoValueCancelsTheContextsOfRetriedAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ctxs []context.Context
		var atWait []error
		hooks := retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) {
			atWait = append(atWait, ctxs[len(ctxs)-1].Err())
		}})
		op := func(ctx context.Context) (context.Context, error) {
			ctxs = append(ctxs, ctx)
			return ctx, errFlaky
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Hour).WithMaxAttempts(3)
		last, err := retry.DoValue(context.Background(), op, p, hooks)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.Len(t, ctxs, 3)
		require.Equal(t, []error{context.Canceled, context.Canceled}, atWait, "cancelled before each wait starts")
		require.Same(t, ctxs[2], last)
		require.NoError(t, last.Err(), "the context of the value returned")
	})
}

// TestDoCancelsEveryAttemptsContext: Do returns no value, so no attempt's
// context outlives it.
func TestDoCancelsEveryAttemptsContext(t *testing.T) {
	var actx context.Context
	err := retry.Do(context.Background(), func(ctx context.Context) error { actx = ctx; return nil },
		policy.Constant(0).WithAttemptTimeout(time.Hour))
	require.NoError(t, err)
	require.ErrorIs(t, actx.Err(), context.Canceled)
}

// TestHedgeValueKeepsTheWinnersContextUnderAnAttemptTimeout: the winner's
// context is never cancelled, the loser's is.
func TestHedgeValueKeepsTheWinnersContextUnderAnAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ctxs []context.Context
		op := func(ctx context.Context) (context.Context, error) {
			mu.Lock()
			ctxs = append(ctxs, ctx)
			n := len(ctxs)
			mu.Unlock()
			if n == 1 {
				<-ctx.Done() // slow: the hedge wins
				return nil, ctx.Err()
			}
			return ctx, nil
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		won, err := retry.HedgeValue(context.Background(), op, p, nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Len(t, ctxs, 2)
		require.Same(t, ctxs[1], won)
		require.ErrorIs(t, ctxs[0].Err(), context.Canceled, "the loser's")
		require.NoError(t, won.Err(), "the winner's")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.ErrorIs(t, won.Err(), context.DeadlineExceeded, "until its own timeout")
	})
}

// TestHedgeValueWinnersContextEndsAtTheCallersDeadline: a caller's deadline
// shorter than the attempt timeout ends the winner's context when it
// passes, though the call has returned and the caller's context is no
// longer watched.
func TestHedgeValueWinnersContextEndsAtTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		op := func(ctx context.Context) (context.Context, error) { return ctx, nil }
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		won, err := retry.HedgeValue(ctx, op, p, nil)
		require.NoError(t, err)
		d, ok := won.Deadline()
		require.True(t, ok)
		want, _ := ctx.Deadline()
		require.Equal(t, want, d, "the winner reports the caller's deadline")
		require.NoError(t, won.Err())
		time.Sleep(time.Second)
		synctest.Wait()
		require.ErrorIs(t, won.Err(), context.DeadlineExceeded, "and ends at it")
	})
}

// TestHedgeValueCancelsTheFailedRoundsContext: the context of a round's
// failure, whose value a later round replaces, ends when the call waits.
func TestHedgeValueCancelsTheFailedRoundsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ctxs []context.Context
		op := func(ctx context.Context) (context.Context, error) {
			ctxs = append(ctxs, ctx)
			if len(ctxs) == 1 {
				return ctx, errFlaky
			}
			return ctx, nil
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: time.Hour})
		won, err := retry.HedgeValue(context.Background(), op, p, nil)
		require.NoError(t, err)
		require.Len(t, ctxs, 2)
		require.ErrorIs(t, ctxs[0].Err(), context.Canceled)
		require.NoError(t, won.Err())
	})
}

// TestAttemptTimeoutMatchesDeadlineExceeded: whatever the operation
// returns when its own timeout cut it off.
func TestAttemptTimeoutMatchesDeadlineExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errStream := errors.New("stream closed")
		err := retry.Do(context.Background(), func(ctx context.Context) error {
			<-ctx.Done()
			return errStream // not the context's error, as gRPC's status errors are not
		}, policy.Constant(0).WithAttemptTimeout(time.Second).WithMaxAttempts(2))
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.ErrorIs(t, err, errStream)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestNoLeakWhenDoValueKeepsAContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	for range 10 {
		_, err := retry.DoValue(ctx, returnCtx, policy.Constant(0).WithAttemptTimeout(time.Hour))
		require.NoError(t, err)
	}
	cancel()
	goleak.VerifyNone(t)
}
