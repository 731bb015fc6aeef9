package backoff_test

import (
	"sync"
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

func TestStrategyConcurrentNextHandsOutEachAttemptOnce(t *testing.T) {
	// One sequence shared by many goroutines: every attempt number is handed
	// out exactly once, so the delays seen are exactly 1..N.
	const goroutines, each = 50, 40
	s := backoff.NewStrategy(backoff.ScheduleFunc(func(n int) time.Duration { return time.Duration(n) }))
	seen := make(chan time.Duration, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				seen <- s.Next()
			}
		})
	}
	wg.Wait()
	close(seen)
	got := make(map[time.Duration]bool)
	for d := range seen {
		require.False(t, got[d], "delay %v handed out twice", d)
		got[d] = true
	}
	for n := 1; n <= goroutines*each; n++ {
		require.True(t, got[time.Duration(n)], "attempt %d never handed out", n)
	}
}
