//go:build go1.25

package policy_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

func TestHedgeValidation(t *testing.T) {
	lat := policy.NewLatency(0.95, 1000)
	for _, tt := range []struct {
		name string
		h    policy.Hedging
		ok   bool
	}{
		{"zero: no hedging", policy.Hedging{}, true},
		{"fixed", policy.Hedging{Delay: time.Millisecond}, true},
		{"adaptive", policy.Hedging{Latency: lat}, true},
		{"adaptive after a fixed warm-up", policy.Hedging{Delay: time.Millisecond, Latency: lat, MaxInFlight: 3}, true},
		{"most in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: policy.MaxHedgeInFlight}, true},
		{"negative delay", policy.Hedging{Delay: -time.Millisecond}, false},
		{"nothing says when", policy.Hedging{MaxInFlight: 3}, false},
		{"one in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: 1}, false},
		{"too many in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: policy.MaxHedgeInFlight + 1}, false},
		{"negative in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: -2}, false},
		{"bad quantile", policy.Hedging{Latency: policy.NewLatency(1, 1000)}, false},
		{"window too small for the quantile", policy.Hedging{Latency: policy.NewLatency(0.99, 999)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := policy.Default().WithHedging(tt.h)
			err := p.Validate()
			if tt.ok {
				require.NoError(t, err)
				require.Equal(t, tt.h, p.Hedging())
				return
			}
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, "hedge")
		})
	}
}

func TestNewLatencyArguments(t *testing.T) {
	for _, tt := range []struct {
		q      float64
		window int
		ok     bool
	}{
		{0.95, 200, true},
		{0.95, 199, false},
		{0.99, 1000, true},
		{0.5, 20, true},
		{0.5, 19, false},
		{0, 1000, false},
		{-0.5, 1000, false},
		{1, 1000, false},
		{0.95, 10_000_001, false},
		{0.95, math.MaxInt, false},
		{math.NaN(), 1000, false},
		{math.Inf(1), 1000, false},
		{math.Inf(-1), 1000, false},
		{0.95, -1, false},
	} {
		err := policy.Default().WithHedging(policy.Hedging{Latency: policy.NewLatency(tt.q, tt.window)}).Validate()
		require.Equal(t, tt.ok, err == nil, "NewLatency(%v, %d): %v", tt.q, tt.window, err)
	}
}

func TestLatencyWarmUp(t *testing.T) {
	lat := policy.NewLatency(0.95, 1000)
	for range 199 {
		lat.Observe(time.Millisecond)
	}
	_, ok := lat.Estimate()
	require.False(t, ok, "199 samples: fewer than ten above the p95")
	lat.Observe(time.Millisecond)
	d, ok := lat.Estimate()
	require.True(t, ok)
	require.GreaterOrEqual(t, d, time.Millisecond)
}

// TestLatencyAccuracy checks the estimate against the exact percentile of
// samples drawn from several distributions: never below it, at most 12.5 %
// above.
func TestLatencyAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name string
		draw func() time.Duration
	}{
		{"constant 10ms", func() time.Duration { return 10 * time.Millisecond }},
		{"uniform 1-100ms", func() time.Duration { return time.Millisecond + time.Duration(rng.Int64N(int64(99*time.Millisecond))) }},
		{"exponential mean 20ms", func() time.Duration { return time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond)) }},
		{"2% at 1s", func() time.Duration {
			if rng.Float64() < 0.02 {
				return time.Second
			}
			return 10 * time.Millisecond
		}},
		{"sub-microsecond", func() time.Duration { return time.Duration(rng.Int64N(900)) }},
	} {
		for _, q := range []float64{0.5, 0.95, 0.99} {
			lat := policy.NewLatency(q, 2000)
			var window []time.Duration
			for range 4000 {
				d := tt.draw()
				lat.Observe(d)
				window = append(window, d)
			}
			// 4000 samples in windows of 2000: exactly the last two windows count,
			// and the last sample completed a window, so the estimate is fresh.
			slices.Sort(window)
			exact := window[int(q*float64(len(window))+0.999999)-1]
			got, ok := lat.Estimate()
			require.True(t, ok)
			require.GreaterOrEqual(t, got, exact, "%s p%v", tt.name, q*100)
			require.LessOrEqual(t, float64(got), 1.125*float64(max(exact, time.Microsecond))+1, "%s p%v", tt.name, q*100)
		}
	}
}

// TestLatencyForgets: the estimate follows a change within two windows.
func TestLatencyForgets(t *testing.T) {
	lat := policy.NewLatency(0.95, 1000)
	for range 5000 {
		lat.Observe(time.Second)
	}
	for range 2000 {
		lat.Observe(10 * time.Millisecond)
	}
	d, _ := lat.Estimate()
	require.Less(t, d, 12*time.Millisecond)
	require.GreaterOrEqual(t, d, 10*time.Millisecond)
}

func TestLatencyExtremes(t *testing.T) {
	lat := policy.NewLatency(0.5, 20)
	for range 20 {
		lat.Observe(-time.Second)
	}
	d, ok := lat.Estimate()
	require.True(t, ok)
	require.Equal(t, time.Microsecond+24*time.Nanosecond, d, "negative counts as zero, in the first bucket")
	for range 40 {
		lat.Observe(1000 * time.Hour)
	}
	d, _ = lat.Estimate()
	require.Greater(t, d, 30*time.Minute, "beyond the last bucket's edge")
}

func TestLatencyConcurrentAndAllocationFree(t *testing.T) {
	lat := policy.NewLatency(0.95, 1000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10_000 {
				lat.Observe(time.Duration(1+(g*10_000+i)%100) * time.Millisecond)
				_, _ = lat.Estimate()
			}
		})
	}
	wg.Wait()
	d, ok := lat.Estimate()
	require.True(t, ok)
	require.InDelta(t, float64(95*time.Millisecond), float64(d), float64(12*time.Millisecond))
	if testing.CoverMode() == "" {
		require.Zero(t, testing.AllocsPerRun(1000, func() { lat.Observe(time.Millisecond); _, _ = lat.Estimate() }))
	}
	require.Less(t, unsafe.Sizeof(*lat), uintptr(2200), "bounded memory, whatever the traffic")
}

func BenchmarkLatencyObserve(b *testing.B) {
	lat := policy.NewLatency(0.95, 1000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		lat.Observe(time.Duration(i%1000) * time.Microsecond)
	}
}

func BenchmarkLatencyEstimate(b *testing.B) {
	lat := policy.NewLatency(0.95, 1000)
	for i := range 1000 {
		lat.Observe(time.Duration(i) * time.Microsecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = lat.Estimate()
	}
}
