package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

func TestDefaultStrategy(t *testing.T) {
	s := backoff.Default()
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300, 300}
	for round := range 2 {
		for i, w := range want {
			require.Equal(t, w*time.Second, s.Next(), "round %d, Next #%d", round, i+1)
		}
		s.Reset()
	}
}

func TestStrategyResetMidSequence(t *testing.T) {
	s := backoff.Default()
	s.Next()
	s.Next()
	s.Reset()
	require.Equal(t, 10*time.Second, s.Next())
	require.Equal(t, 20*time.Second, s.Next())
}

func TestStrategyClampsNegative(t *testing.T) {
	s := backoff.NewStrategy(backoff.ScheduleFunc(func(n int) time.Duration { return -time.Duration(n) }))
	require.Equal(t, time.Duration(0), s.Next())
}

// A Strategy's k-th Next since the last Reset is its schedule's Delay(k),
// for the schedules with a fast path and for those without.
func TestStrategyFollowsItsSchedule(t *testing.T) {
	schedules := []backoff.Schedule{
		backoff.Kubelet(),
		backoff.Exponential(3, 2),
		backoff.Exponential(time.Duration(math.MaxInt64/5), 2),
		backoff.Cap(backoff.Exponential(time.Minute, 2), time.Second),
		backoff.Cap(backoff.Exponential(time.Second, 2), -1),
		backoff.Exponential(time.Second, 0.5),
		backoff.Exponential(time.Second, 1.6),
		backoff.Constant(-time.Second),
		backoff.Cap(backoff.Constant(time.Hour), time.Minute),
	}
	for _, s := range schedules {
		st := backoff.NewStrategy(s)
		for round := range 2 {
			for k := 1; k <= 70; k++ {
				require.Equal(t, s.Delay(k), st.Next(), "%#v, round %d, Next #%d", s, round, k)
			}
			st.Reset()
		}
	}
}

func TestKubeletSchedule(t *testing.T) {
	s := backoff.Kubelet()
	for n, w := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		require.Equal(t, w*time.Second, s.Delay(n+1))
	}
	require.Equal(t, 300*time.Second, s.Delay(math.MaxInt))
}

// The kubelet's Strategy hands out its delays without allocating.
func TestStrategyNextAllocs(t *testing.T) {
	s := backoff.Default()
	require.Zero(t, testing.AllocsPerRun(100, func() {
		s.Reset()
		for range 20 {
			s.Next()
		}
	}))
}
