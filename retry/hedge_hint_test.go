//go:build go1.25

package retry_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retry"
)

// TestHedgeHeldBackByAHintOnItsWay: an attempt returns a hint at 5ms, and
// its outcome reaches the round only at 15ms. The hedge due at 10ms does
// not start: the round waits the hint, and the next attempt starts at 1.015s.
func TestHedgeHeldBackByAHintOnItsWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var starts []time.Duration
		begin := time.Now()
		op := func(ctx context.Context) error {
			mu.Lock()
			starts = append(starts, time.Since(begin))
			n := len(starts)
			mu.Unlock()
			if n == 1 {
				time.Sleep(5 * time.Millisecond)
				return retry.After(time.Second, errFlaky) // a 503 with Retry-After: 1
			}
			return nil
		}
		// The attempt's goroutine is slow to hand its outcome over: what a
		// busy machine does between the operation's return and the send.
		slowHandOver := retry.WithHooks(&retry.Hooks{OnAttemptDone: func(_ context.Context, e retry.AttemptEvent) {
			if e.Attempt == 1 {
				time.Sleep(10 * time.Millisecond)
			}
		}})
		var k tally
		err := retry.Hedge(context.Background(), op, hedged(10*time.Millisecond), slowHandOver, retry.WithHooks(k.hooks()))
		require.NoError(t, err)
		require.Equal(t, []time.Duration{0, time.Second + 15*time.Millisecond}, starts, "no hedge beside the hinted attempt")
		require.Zero(t, k.hedges)
		require.Equal(t, 2, k.done[0].Attempts)
	})
}
