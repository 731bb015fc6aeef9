//go:build go1.25

package tail_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/tail"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// Hedged is the hedging client of the goal: hedge after the adaptive p95,
// one hedge at most, under the default guard; failures are retried after
// 10 ms, up to 3 attempts in all.
func hedged(g *policy.Guard) policy.Policy {
	return policy.Constant(10 * time.Millisecond).WithMaxAttempts(3).
		WithGuard(g).
		WithHedging(policy.Hedging{Quantile: 0.95})
}

func inBubble(t *testing.T, call tail.Caller) tail.Result {
	t.Helper()
	var r tail.Result
	synctest.Test(t, func(t *testing.T) { r = tail.Run(tail.Tail(), call) })
	return r
}

// TestHedgingGoal: with hedging after the adaptive p95, the p99 latency
// drops at least tenfold and the extra attempts stay within 6 %.
func TestHedgingGoal(t *testing.T) {
	plainPolicy := policy.Constant(10 * time.Millisecond).WithMaxAttempts(3)
	plain := inBubble(t, func(ctx context.Context, attempt func(context.Context) error) error {
		return retry.Do(ctx, attempt, plainPolicy)
	})
	g := policy.NewGuard(10, 0.4)
	p := hedged(g)
	h := inBubble(t, func(ctx context.Context, attempt func(context.Context) error) error {
		return retry.Hedge(ctx, attempt, p)
	})
	for name, r := range map[string]tail.Result{"without hedging": plain, "hedged": h} {
		t.Logf("%s: p50 %v, p90 %v, p99 %v, p99.9 %v, max %v, extra attempts %.2f%%", name,
			r.Percentile(0.5), r.Percentile(0.9), r.Percentile(0.99), r.Percentile(0.999), r.Percentile(1), 100*r.Extra())
		require.Zero(t, r.Failed)
		require.Len(t, r.Latencies, 10_000)
	}
	est, _ := (*admit.Guard)(g).Latency(0.95)
	t.Logf("hedge delay at the end: %v", est)
	require.Equal(t, time.Second, plain.Percentile(0.99), "without hedging the p99 is a slow attempt")
	require.Zero(t, plain.Extra())
	require.LessOrEqual(t, 10*h.Percentile(0.99), plain.Percentile(0.99), "p99 at least ten times lower")
	require.LessOrEqual(t, h.Extra(), 0.06, "extra attempts")
	require.Equal(t, plain.Percentile(0.5), h.Percentile(0.5), "the median is untouched")
}

func TestResult(t *testing.T) {
	r := tail.Result{Latencies: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Attempts: 12}
	require.Equal(t, time.Duration(5), r.Percentile(0.5))
	require.Equal(t, time.Duration(10), r.Percentile(0.99))
	require.Equal(t, time.Duration(1), r.Percentile(0))
	require.InDelta(t, 0.2, r.Extra(), 1e-9)
	require.Zero(t, tail.Result{}.Percentile(0.5))
	require.Equal(t, 100*time.Millisecond, tail.Tail().Scaled(10).Slow)
}
