//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func TestGroupPermanentFailureReleasesEveryParkedTask(t *testing.T) {
	const tasks = 1000
	errFatal := errors.New("bad credentials")
	g, ctx := errgroup.WithContext(context.Background())

	// Every other task fails once and parks in a 300s back-off on the real
	// clock. Once all of them are about to wait, one task fails for good.
	var parked sync.WaitGroup
	parked.Add(tasks - 1)
	var mu sync.Mutex
	var ends []error
	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry: func(context.Context, retry.RetryEvent) { parked.Done() },
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			mu.Lock()
			ends = append(ends, e.Err)
			mu.Unlock()
		},
	})
	p := policy.Constant(300 * time.Second)
	start := time.Now()
	for range tasks - 1 {
		retry.Go(ctx, g, func(context.Context) error { return errFlaky }, p, hooks)
	}
	retry.Go(ctx, g, func(context.Context) error {
		parked.Wait()
		return retry.Permanent(errFatal)
	}, p)

	err := g.Wait()
	require.Same(t, errFatal, err)
	require.Less(t, time.Since(start), 100*time.Second, "g.Wait must not wait out the 300s timers")
	require.Len(t, ends, tasks-1)
	for _, e := range ends {
		require.ErrorIs(t, e, context.Canceled)
		require.ErrorIs(t, e, errFlaky, "each task keeps its last error")
	}
}

func TestGroupSetLimit(t *testing.T) {
	const limit = 4
	var g errgroup.Group
	g.SetLimit(limit)
	var running, peak, calls atomic.Int32
	for range 100 {
		retry.Go(context.Background(), &g, func(context.Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if calls.Add(1)%3 != 0 {
				return errFlaky
			}
			return nil
		}, policy.Constant(0))
	}
	require.NoError(t, g.Wait())
	require.LessOrEqual(t, peak.Load(), int32(limit))
	require.GreaterOrEqual(t, calls.Load(), int32(100))
}
