package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

const maxDuration = time.Duration(math.MaxInt64)

func TestExponentialKubeletSequence(t *testing.T) {
	e := backoff.Exponential(10*time.Second, 2)
	want := []time.Duration{10, 20, 40, 80, 160, 320, 640}
	for i, w := range want {
		require.Equal(t, w*time.Second, e.Delay(i+1), "Delay(%d)", i+1)
	}
}

func TestExponentialSaturates(t *testing.T) {
	tests := []struct {
		name string
		e    backoff.Schedule
		n    int
		want time.Duration
	}{
		{"x2 at 63 steps", backoff.Exponential(1, 2), 64, maxDuration},
		{"x2 last exact step", backoff.Exponential(1, 2), 63, 1 << 62},
		{"x2 overflow of a large base", backoff.Exponential(time.Hour, 2), 40, maxDuration},
		{"x2 MaxInt", backoff.Exponential(time.Second, 2), math.MaxInt, maxDuration},
		{"x1.5 MaxInt", backoff.Exponential(time.Second, 1.5), math.MaxInt, maxDuration},
		{"x1.000001 MaxInt", backoff.Exponential(1, 1.000001), math.MaxInt, maxDuration},
		{"huge factor", backoff.Exponential(1, math.MaxFloat64), 3, maxDuration},
		{"infinite factor", backoff.Exponential(1, math.Inf(1)), 2, maxDuration},
		{"max base", backoff.Exponential(maxDuration, 3), 2, maxDuration},
		{"factor 1", backoff.Exponential(time.Second, 1), math.MaxInt, time.Second},
		{"factor below 1 taken as 1", backoff.Exponential(time.Second, 0.5), 10, time.Second},
		{"NaN factor taken as 1", backoff.Exponential(time.Second, math.NaN()), 10, time.Second},
		{"negative base waits zero", backoff.Exponential(-time.Second, 2), 3, 0},
		{"n below 1 taken as 1", backoff.Exponential(time.Second, 2), math.MinInt, time.Second},
		{"x1.6", backoff.Exponential(time.Second, 1.6), 3, 2560 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.e.Delay(tt.n))
		})
	}
}

func TestExponentialNeverDecreases(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{1 + 1e-15, 1 + 1e-9, 1.01, 1.1, 1.5, 1.6, 2, 2.5, 3, 10, 1e6} {
		for _, base := range []time.Duration{1, 7, time.Millisecond, 10 * time.Second, time.Hour} {
			e := backoff.Exponential(base, f)
			prev := e.Delay(1)
			for n := 2; n < 5000; n++ {
				d := e.Delay(n)
				require.GreaterOrEqual(t, d, prev, "factor %v base %v: Delay(%d) = %v < Delay(%d) = %v", f, base, n, d, n-1, prev)
				prev = d
			}
		}
	}
}

func TestCap(t *testing.T) {
	s := backoff.Cap(backoff.Exponential(10*time.Second, 2), 300*time.Second)
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300, 300}
	for i, w := range want {
		require.Equal(t, w*time.Second, s.Delay(i+1), "Delay(%d)", i+1)
	}
	require.Equal(t, 300*time.Second, s.Delay(math.MaxInt))

	neg := backoff.Cap(backoff.ScheduleFunc(func(int) time.Duration { return -time.Second }), time.Minute)
	require.Equal(t, time.Duration(0), neg.Delay(1), "a negative delay is clamped to zero")

	uncapped := backoff.Cap(backoff.Constant(time.Hour), 0)
	require.Equal(t, time.Hour, uncapped.Delay(5), "a zero cap means no cap")
}

func TestConstant(t *testing.T) {
	require.Equal(t, time.Second, backoff.Constant(time.Second).Delay(math.MaxInt))
	require.Equal(t, time.Duration(0), backoff.Constant(-time.Second).Delay(1))
	require.Equal(t, time.Duration(0), backoff.Constant(0).Delay(1))
}
