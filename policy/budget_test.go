package policy_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestBudgetRatio(t *testing.T) {
	b := policy.NewBudget(0.1, 0)
	for range 100 {
		b.Call(t0)
	}
	allowed := 0
	for range 50 {
		if b.TryRetry(t0) {
			allowed++
		}
	}
	require.Equal(t, 10, allowed, "10%% of 100 calls")
}

func TestBudgetFloor(t *testing.T) {
	b := policy.NewBudget(0, 2)
	allowed := 0
	for range 100 {
		if b.TryRetry(t0) {
			allowed++
		}
	}
	require.Equal(t, 20, allowed, "2 retries per second over a 10s window")
}

func TestBudgetWindowSlides(t *testing.T) {
	b := policy.NewBudget(0.5, 0)
	for range 10 {
		b.Call(t0)
	}
	for range 5 {
		require.True(t, b.TryRetry(t0))
	}
	require.False(t, b.TryRetry(t0), "spent")
	require.False(t, b.TryRetry(t0.Add(9*time.Second)), "still within the window")
	require.False(t, b.TryRetry(t0.Add(10*time.Second)), "the calls have left the window with the retries")
	b.Call(t0.Add(10 * time.Second))
	b.Call(t0.Add(10 * time.Second))
	require.True(t, b.TryRetry(t0.Add(10*time.Second)), "new calls refill it")
}

func TestBudgetConcurrent(t *testing.T) {
	b := policy.NewBudget(0.1, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 1000 {
		wg.Go(func() {
			b.Call(t0)
			if b.TryRetry(t0) {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, allowed, 100)
}

func TestBudgetValidation(t *testing.T) {
	for _, tt := range []struct{ ratio, floor float64 }{
		{-0.1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}, {0.1, -1}, {0.1, math.NaN()}, {0.1, math.Inf(1)},
	} {
		err := policy.Default().WithBudget(policy.NewBudget(tt.ratio, tt.floor)).Validate()
		require.ErrorIs(t, err, policy.ErrInvalid, "ratio %v floor %v", tt.ratio, tt.floor)
		require.Contains(t, err.Error(), "invalid budget")
	}
	require.NoError(t, policy.Default().WithBudget(policy.NewBudget(0.2, 10)).Validate())
	require.Equal(t, "budget 20% floor 10/s", policy.NewBudget(0.2, 10).String())
	for _, tt := range []struct {
		ratio, floor float64
		want         string
	}{
		{0.07, 0, "budget 7% floor 0/s"},
		{0.1, 0, "budget 10% floor 0/s"},
		{0.29, 0.5, "budget 29% floor 0.5/s"},
		{1.15, 0, "budget 115% floor 0/s"},
		{0.0001, 3, "budget 0.01% floor 3/s"},
		{0, 0, "budget 0% floor 0/s"},
		{2.5e-20, 0, "budget 0.0000000000000000025% floor 0/s"},
	} {
		require.Equal(t, tt.want, policy.NewBudget(tt.ratio, tt.floor).String())
	}
	require.Equal(t, "no budget", policy.Default().Budget().String(), "a policy's nil budget prints")
}

func BenchmarkBudget(b *testing.B) {
	bg := policy.NewBudget(0.1, 10)
	b.ReportAllocs()
	for b.Loop() {
		bg.Call(t0)
		bg.TryRetry(t0)
	}
}
