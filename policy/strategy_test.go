package policy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

func TestResetStartsOver(t *testing.T) {
	tests := []struct {
		name      string
		r         policy.ResetRule
		succeeded bool
		ran, idle time.Duration
		want      bool
	}{
		{"success, default rule", policy.ResetOnSuccess, true, 0, 0, true},
		{"failure, default rule", policy.ResetOnSuccess, false, time.Hour, time.Hour, false},
		{"stable run reached", policy.ResetRule{AfterStableRun: 10 * time.Minute}, false, 10 * time.Minute, 0, true},
		{"stable run short", policy.ResetRule{AfterStableRun: 10 * time.Minute}, false, 9 * time.Minute, 0, false},
		{"kubelet ignores success", policy.ResetRule{AfterStableRun: 10 * time.Minute}, true, time.Second, 0, false},
		{"idle past the window", policy.ResetRule{AfterIdle: 600 * time.Second}, false, 0, 601 * time.Second, true},
		{"idle at the window", policy.ResetRule{AfterIdle: 600 * time.Second}, false, 0, 600 * time.Second, false},
		{"zero rule never", policy.ResetRule{}, true, time.Hour, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.r.StartsOver(tt.succeeded, tt.ran, tt.idle))
		})
	}
}

func TestStrategyFromDefaultPolicy(t *testing.T) {
	s := policy.Default().Strategy()
	for _, w := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		require.Equal(t, w*time.Second, s.Next())
	}
	s.Reset()
	require.Equal(t, 10*time.Second, s.Next())
}

func TestStrategyKubeletStableRun(t *testing.T) {
	mock := clock.NewMock()
	s := policy.Default().WithResetRule(policy.ResetRule{AfterStableRun: 10 * time.Minute}).WithClock(mock).Strategy()
	// A container crashing right after each restart: the delay grows.
	for _, w := range []time.Duration{10, 20, 40, 80} {
		d := s.Next()
		require.Equal(t, w*time.Second, d)
		mock.Add(d + time.Second) // the wait, then a one-second run
	}
	require.Equal(t, 160*time.Second, s.Next())
	mock.Add(160*time.Second + 10*time.Minute) // the wait, then a 10-minute run
	require.Equal(t, 10*time.Second, s.Next(), "a stable run starts over")
}

// An explicit Reset is the caller's decision: it starts over under every
// reset rule, including ones that do not reset on success.
func TestStrategyResetAlwaysStartsOver(t *testing.T) {
	rules := []policy.ResetRule{
		policy.ResetOnSuccess,
		{AfterStableRun: 10 * time.Minute},
		{AfterIdle: 600 * time.Second},
		{},
	}
	for _, r := range rules {
		t.Run(fmt.Sprintf("%+v", r), func(t *testing.T) {
			mock := clock.NewMock()
			s := policy.Default().WithResetRule(r).WithClock(mock).Strategy()
			require.Equal(t, 10*time.Second, s.Next())
			mock.Add(11 * time.Second)
			require.Equal(t, 20*time.Second, s.Next())
			mock.Add(21 * time.Second)
			s.Reset()
			require.Equal(t, 10*time.Second, s.Next(), "Next after Reset")
			mock.Add(11 * time.Second)
			require.Equal(t, 20*time.Second, s.Next(), "the sequence goes on from the start")
		})
	}
}

func TestStrategyIdleReset(t *testing.T) {
	mock := clock.NewMock()
	s := policy.Default().WithResetRule(policy.ResetRule{OnSuccess: true, AfterIdle: 600 * time.Second}).WithClock(mock).Strategy()
	require.Equal(t, 10*time.Second, s.Next())
	mock.Add(600 * time.Second)
	require.Equal(t, 20*time.Second, s.Next(), "at the window: not idle yet")
	mock.Add(601 * time.Second)
	require.Equal(t, 10*time.Second, s.Next(), "past the window: starts over")
}

func TestSeededJitterIsReproducible(t *testing.T) {
	schedule := func(seed uint64) []time.Duration {
		p := policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Full}).WithRandom(rand.NewPCG(seed, seed))
		var ds []time.Duration
		var prev time.Duration
		for n := 1; n <= 20; n++ {
			prev = p.Backoff(n, prev)
			ds = append(ds, prev)
		}
		return ds
	}
	require.Equal(t, schedule(7), schedule(7))
	require.NotEqual(t, schedule(7), schedule(8))
	for _, d := range schedule(9) {
		require.LessOrEqual(t, d, 300*time.Second)
	}
}

func TestJitterValidation(t *testing.T) {
	bad := []backoff.Jitter{
		{Kind: backoff.Symmetric, Fraction: 1.5},
		{Kind: backoff.Symmetric, Fraction: -0.1},
		{Kind: backoff.Proportional, Fraction: -1},
		{Kind: backoff.Full, Fraction: 0.5},
		{Kind: 42},
	}
	for _, j := range bad {
		err := policy.Default().WithJitter(j).Validate()
		require.ErrorIs(t, err, policy.ErrInvalid, "%+v", j)
		require.Contains(t, err.Error(), "invalid jitter")
	}
	require.NoError(t, policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: 0.2}).Validate())
}
