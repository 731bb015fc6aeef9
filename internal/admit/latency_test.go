package admit_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
)

// maxLatencyBytes bounds the estimate's memory: two histograms of 249
// counts of 4 bytes, and a few words.
const maxLatencyBytes = 2*249*4 + 64

func TestLatencyWarmUp(t *testing.T) {
	for _, tt := range []struct {
		q    float64
		warm int // samples before the first estimate: ten above the quantile
	}{
		{0.95, 200},
		{0.99, 1000},
		{0.5, 20},
		{0.9, 100},
	} {
		g := admit.New(10, 1)
		for range tt.warm - 1 {
			g.Observe(time.Millisecond)
		}
		_, ok := g.Latency(tt.q)
		require.False(t, ok, "%d samples: fewer than ten above the %v quantile", tt.warm-1, tt.q)
		g.Observe(time.Millisecond)
		d, ok := g.Latency(tt.q)
		require.True(t, ok, "%d samples for the %v quantile", tt.warm, tt.q)
		require.GreaterOrEqual(t, d, time.Millisecond)
	}
}

// TestLatencyQuantiles: a quantile outside 0 (excluded) to MaxQuantile has
// no estimate, however many samples; a nil guard has none.
func TestLatencyQuantiles(t *testing.T) {
	g := admit.New(10, 1)
	for range 5000 {
		g.Observe(time.Millisecond)
	}
	for _, q := range []float64{0, -0.5, admit.MaxQuantile + 1e-9, 0.995, 1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, ok := g.Latency(q)
		require.False(t, ok, "quantile %v", q)
	}
	for _, q := range []float64{1e-9, 0.5, 0.95, admit.MaxQuantile} {
		_, ok := g.Latency(q)
		require.True(t, ok, "quantile %v", q)
	}
	require.Equal(t, 0.99, admit.MaxQuantile)
	_, ok := (*admit.Guard)(nil).Latency(0.5)
	require.False(t, ok, "a nil guard")
}

// TestLatencyAccuracy checks the estimate against the exact quantile of
// samples drawn from several distributions: never below it, at most 12.5 %
// above. One guard answers every quantile from the same samples.
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
		g := admit.New(10, 1)
		var samples []time.Duration
		for range 2999 {
			d := tt.draw()
			g.Observe(d)
			samples = append(samples, d)
		}
		// In windows of 1000, the third window has begun and the first has
		// been dropped: the last 1999 samples count.
		window := samples[1000:]
		slices.Sort(window)
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
			exact := window[int(q*float64(len(window))+0.999999)-1]
			got, ok := g.Latency(q)
			require.True(t, ok)
			require.GreaterOrEqual(t, got, exact, "%s p%v", tt.name, q*100)
			require.LessOrEqual(t, float64(got), 1.125*float64(max(exact, time.Microsecond))+1, "%s p%v", tt.name, q*100)
		}
	}
}

// TestLatencyForgets: the estimate follows a change within two windows.
func TestLatencyForgets(t *testing.T) {
	g := admit.New(10, 1)
	for range 5000 {
		g.Observe(time.Second)
	}
	for range 2000 {
		g.Observe(10 * time.Millisecond)
	}
	d, _ := g.Latency(0.95)
	require.Less(t, d, 12*time.Millisecond)
	require.GreaterOrEqual(t, d, 10*time.Millisecond)
}

func TestLatencyExtremes(t *testing.T) {
	g := admit.New(10, 1)
	for range 20 {
		g.Observe(-time.Second)
	}
	d, ok := g.Latency(0.5)
	require.True(t, ok)
	require.Equal(t, time.Microsecond+24*time.Nanosecond, d, "negative counts as zero, in the first bucket")
	for range 40 {
		g.Observe(1000 * time.Hour)
	}
	d, _ = g.Latency(0.5)
	require.Greater(t, d, 30*time.Minute, "beyond the last bucket's edge")
}

// TestLatencyMemory: a guard that never hedges holds no estimate; the
// first Observe allocates it, and nothing after that allocates, whatever
// the traffic.
func TestLatencyMemory(t *testing.T) {
	g := admit.New(10, 1)
	_, ok := g.Latency(0.5)
	require.False(t, ok)
	require.False(t, admit.HasLatency(g), "asking allocates nothing")
	var zero admit.Guard
	zero.Observe(time.Millisecond)
	require.True(t, admit.HasLatency(&zero), "the zero Guard keeps an estimate too")
	require.Less(t, admit.LatencyBytes(), uintptr(maxLatencyBytes), "bounded memory, whatever the traffic")
	if testing.CoverMode() == "" {
		require.Zero(t, testing.AllocsPerRun(1000, func() { zero.Observe(time.Millisecond); _, _ = zero.Latency(0.95) }))
	}
}

func TestLatencyConcurrent(t *testing.T) {
	g := admit.New(10, 1)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10_000 {
				g.Observe(time.Duration(1+(w*10_000+i)%100) * time.Millisecond)
				_, _ = g.Latency(0.95)
			}
		}()
	}
	wg.Wait()
	d, ok := g.Latency(0.95)
	require.True(t, ok)
	require.InDelta(t, float64(95*time.Millisecond), float64(d), float64(12*time.Millisecond))
}

func BenchmarkLatencyObserve(b *testing.B) {
	g := admit.New(10, 1)
	g.Observe(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g.Observe(time.Duration(i%1000) * time.Microsecond)
	}
}

func BenchmarkLatencyEstimate(b *testing.B) {
	g := admit.New(10, 1)
	for i := range 1000 {
		g.Observe(time.Duration(i) * time.Millisecond / 100)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, _ = g.Latency(0.95)
	}
}
