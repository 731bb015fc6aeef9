//go:build go1.25

package retry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// A denied retry waits its back-off, unless a success first says that the
// dependency serves again: then it asks again at once.
func TestGuardDeniedRetryGoesWhenTheDependencyServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 1)
		drain(g)
		protocol(g).Allow(time.Now()) // the probe of this second, spent
		busy(t, g)
		var waits []time.Duration
		hooks := retry.WithHooks(&retry.Hooks{OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
			waits = append(waits, e.Wait)
			return ctx
		}})
		go func() { // another call's success, after the denial at 0.4s
			time.Sleep(500 * time.Millisecond)
			protocol(g).Record(false, admit.Succeeded)
		}()
		op := fails(1, errFlaky)
		start := time.Now()
		err := retry.Do(context.Background(), op.op, policy.Constant(400*time.Millisecond).WithMaxAttempts(5).WithGuard(g), hooks)
		require.NoError(t, err)
		require.EqualValues(t, 2, op.calls.Load())
		require.Equal(t, 500*time.Millisecond, time.Since(start), "denied at 0.4s, let go by the success at 0.5s")
		require.Equal(t, []time.Duration{0, 500 * time.Millisecond}, waits, "the wait cut short counts for what it lasted")
	})
}

// A server's hint is waited out in full, a success meanwhile or not.
func TestGuardDeniedRetryWaitsOutAHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 1)
		drain(g)
		protocol(g).Allow(time.Now())
		busy(t, g)
		go func() {
			time.Sleep(500 * time.Millisecond)
			protocol(g).Record(false, admit.Succeeded)
		}()
		op := fails(1, retry.After(400*time.Millisecond, errFlaky))
		start := time.Now()
		err := retry.Do(context.Background(), op.op, policy.Constant(time.Millisecond).WithMaxAttempts(5).WithGuard(g))
		require.NoError(t, err)
		require.Equal(t, 800*time.Millisecond, time.Since(start), "denied at 0.4s, the hint waited again")
	})
}
