package backoff_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

// jitterBounds returns the interval the formula of j allows for delay d.
func jitterBounds(j backoff.Jitter, d, prev, base, limit time.Duration) (lo, hi time.Duration) {
	d = min(d, limit)
	f := j.Fraction
	switch j.Kind {
	case backoff.Full:
		return 0, d
	case backoff.Equal:
		return d / 2, d
	case backoff.Decorrelated:
		if prev == 0 {
			prev = base
		}
		hi := limit
		if prev <= limit/3 {
			hi = 3 * prev
		}
		return min(base, limit), max(hi, min(base, limit))
	case backoff.Proportional:
		if float64(d)*(1+f) > float64(limit) {
			return dur(float64(limit)/(1+f)) - 1, limit
		}
		return d, dur(float64(d) * (1 + f))
	case backoff.Symmetric:
		top := min(float64(d)*(1+f), float64(limit))
		return dur(top*(1-f)/(1+f)) - 1, dur(top)
	}
	return d, d
}

// dur converts x to a Duration, saturating where the conversion would wrap.
func dur(x float64) time.Duration {
	if x >= float64(maxDuration) {
		return maxDuration
	}
	return time.Duration(x)
}

var jitters = []backoff.Jitter{
	{}, // the zero kind: no jitter
	{Kind: backoff.Full},
	{Kind: backoff.Equal},
	{Kind: backoff.Decorrelated},
	{Kind: backoff.Proportional, Fraction: 0.5},
	{Kind: backoff.Proportional, Fraction: 3},
	{Kind: backoff.Symmetric, Fraction: 0.2},
	{Kind: backoff.Symmetric, Fraction: 1},
}

func TestJitterStaysWithinItsFormulaAndTheCap(t *testing.T) {
	t.Parallel()
	attempts := []int{1, 2, 3, 10, 30, 31, 32, 62, 63, 64, 65, 1000, math.MaxInt / 2, math.MaxInt - 1, math.MaxInt}
	schedules := []struct {
		base   time.Duration
		factor float64
		limit  time.Duration
	}{
		{10 * time.Second, 2, 300 * time.Second},
		{time.Second, 1.6, 120 * time.Second},
		{time.Millisecond, 3, maxDuration},
		{1, 2, 1},
		{time.Hour, 10, maxDuration - 1},
	}
	for _, j := range jitters {
		for seed := range uint64(50) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			for _, sc := range schedules {
				e := backoff.Exponential(sc.base, sc.factor)
				var prev time.Duration
				for _, n := range attempts {
					d := min(e.Delay(n), sc.limit)
					got := j.Apply(d, prev, sc.base, sc.limit, r.Uint64())
					lo, hi := jitterBounds(j, d, prev, sc.base, sc.limit)
					require.GreaterOrEqual(t, got, time.Duration(0), "%v n=%d", j, n)
					require.LessOrEqual(t, got, sc.limit, "%v n=%d: above the cap", j, n)
					require.GreaterOrEqual(t, got, lo, "%v d=%v n=%d", j, d, n)
					require.LessOrEqual(t, got, hi, "%v d=%v n=%d", j, d, n)
					prev = got
				}
			}
		}
	}
}

func TestJitterExtremeRandomNumbers(t *testing.T) {
	for _, j := range jitters {
		for _, u := range []uint64{0, 1, math.MaxUint64 - 1, math.MaxUint64} {
			for _, d := range []time.Duration{0, 1, time.Second, maxDuration} {
				got := j.Apply(d, d, 1, maxDuration, u)
				require.GreaterOrEqual(t, got, time.Duration(0))
				got = j.Apply(d, d, 1, time.Minute, u)
				require.LessOrEqual(t, got, time.Minute)
			}
		}
	}
}

func TestFullJitterMean(t *testing.T) {
	const draws = 100_000
	d := 10 * time.Second
	r := rand.New(rand.NewPCG(1, 2))
	var sum float64
	for range draws {
		sum += float64(backoff.Jitter{Kind: backoff.Full}.Apply(d, 0, d, 0, r.Uint64()))
	}
	mean := sum / draws
	require.InEpsilon(t, float64(d)/2, mean, 0.02, "mean of full jitter = %v", time.Duration(mean))
}

func TestJitterAtTheCapStaysSpread(t *testing.T) {
	// Clients sitting at the cap must not all wait exactly the cap.
	for _, j := range jitters[1:] {
		seen := map[time.Duration]bool{}
		r := rand.New(rand.NewPCG(3, 4))
		for range 100 {
			seen[j.Apply(300*time.Second, 300*time.Second, 10*time.Second, 300*time.Second, r.Uint64())] = true
		}
		require.Greater(t, len(seen), 90, "%v at the cap: only %d distinct delays in 100", j, len(seen))
	}
}
