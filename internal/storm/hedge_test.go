//go:build go1.25

package storm_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/storm"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// hedgedGuarded is the default guard's client, hedging after the p95 of its
// attempts' latency: the storm goal must hold with hedging on, because the
// guard limits hedges as it limits retries.
func hedgedGuarded() policy.Policy {
	return storm.Guarded().For(storm.Storm()).WithHedging(policy.Hedging{Quantile: 0.95})
}

// runHedged runs s inside a synctest bubble with every call made by
// retry.Hedge under a fresh hedgedGuarded policy.
// It returns the hedges started too.
func runHedged(t *testing.T, s storm.Scenario) (storm.Result, int64) {
	t.Helper()
	return runHedgedWith(t, s, hedgedGuarded)
}

func runHedgedWith(t *testing.T, s storm.Scenario, newPolicy func() policy.Policy) (storm.Result, int64) {
	t.Helper()
	var (
		r      storm.Result
		hedges atomic.Int64
	)
	hooks := retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) { hedges.Add(int64(e.Hedges)) }})
	synctest.Test(t, func(t *testing.T) {
		p := newPolicy()
		r = storm.RunRealThrough(s, func(_ int, attempt func(context.Context) error) bool {
			return retry.Hedge(context.Background(), attempt, p, hooks) == nil
		})
	})
	return r, hedges.Load()
}

func TestStressStormGoalWithHedging(t *testing.T) {
	if raceEnabled {
		t.Skip("the storm runs without the race detector; TestHedgeConcurrentCalls covers hedging under -race")
	}
	noRetry := inBubble(t, storm.Storm(), client(t, "no retry"))
	base, ok := noRetry.Recovered(stallEnd, 0.95)
	require.True(t, ok)

	r, hedges := runHedged(t, storm.Storm())
	after, ok := r.Recovered(stallEnd, 0.95)
	require.True(t, ok, "the hedged guarded client never recovers: %v", r.Goodput)
	t.Logf("hedged guard: recovered %v after the stall (no retry: %v), %.2f%% success, %.4f attempts per call, %d hedges", after, base, 100*r.Success(), r.Amplification(), hedges)
	require.Positive(t, hedges, "the stall makes attempts slow: some calls hedge before the guard stops them")
	require.LessOrEqual(t, after, base+time.Second, "recovery beside the client that never retries")

	// The same hedges without the guard, with at most two attempts (the
	// first and a hedge or a retry): the storm never ends. A quantile needs
	// a guard to estimate it, so these hedge after a fixed delay: the p95
	// that the guarded client estimates here, 1.048576ms, the upper edge of
	// the bucket of the 1ms service time.
	unguarded, hedges := runHedgedWith(t, storm.Storm(), func() policy.Policy {
		return storm.Retrying().WithMaxAttempts(2).WithHedging(policy.Hedging{Delay: 1048576 * time.Nanosecond})
	})
	_, ok = unguarded.Recovered(stallEnd, 0.95)
	t.Logf("hedged without a guard: %.2f%% success, %.4f attempts per call, %d hedges", 100*unguarded.Success(), unguarded.Amplification(), hedges)
	require.False(t, ok, "hedging without a guard recovers, so the guard is not what limits the hedges")

	// Without a stall, the hedges are the p95's few percent.
	calm := storm.Storm()
	calm.Stall = 0
	c, hedges := runHedged(t, calm)
	t.Logf("hedged guard, no stall: %.3f%% success, %.4f attempts per call, %d hedges", 100*c.Success(), c.Amplification(), hedges)
	require.Equal(t, 1.0, c.Success())
	require.Less(t, c.Amplification(), 1.08)
}
