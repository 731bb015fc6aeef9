package storm_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/storm"
)

// stallEnd is when the storm scenario's stall ends.
var stallEnd = storm.Storm().StallAt + storm.Storm().Stall

// client returns the named client of storm.Clients.
func client(t *testing.T, name string) storm.Client {
	t.Helper()
	for _, c := range storm.Clients() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no client %q", name)
	return storm.Client{}
}

// inBubble runs s for c inside a synctest bubble, on the real clock's fake time,
// and, without the race detector (which makes it slow), checks that the
// virtual clock of examples/storm measures the same.
func inBubble(t *testing.T, s storm.Scenario, c storm.Client) storm.Result {
	t.Helper()
	var r storm.Result
	synctest.Test(t, func(t *testing.T) { r = storm.RunReal(s, c.New()) })
	if raceEnabled {
		return r
	}
	v := storm.RunVirtual(s, c.New())
	require.Equal(t, v.Calls, r.Calls)
	require.InDelta(t, v.Success(), r.Success(), 0.005, "%s: success on the virtual clock and in synctest", c.Name)
	require.InDelta(t, v.Amplification(), r.Amplification(), 0.02, "%s: attempts per call on the virtual clock and in synctest", c.Name)
	rv, okv := v.Recovered(stallEnd, 0.95)
	rr, okr := r.Recovered(stallEnd, 0.95)
	if s.Stall > 0 {
		require.Equal(t, okv, okr, "%s: recovered on the virtual clock and in synctest", c.Name)
		require.InDelta(t, rv.Seconds(), rr.Seconds(), 1, "%s: recovery on the virtual clock and in synctest", c.Name)
	}
	return r
}

// TestStressStormGoals is the scenario of the guard's three goals, with
// every library timer on synctest's virtual time: 800 calls/s for 40 s
// against a FIFO server of 1,000 calls/s (1 ms each) that stalls for 2 s at
// t = 5 s; each attempt times out after 1 s and still costs the server its
// 1 ms; clients retry from 100 ms, ×2, cap 2 s, full jitter, at most 4
// attempts.
func TestStressStormGoals(t *testing.T) {
	noRetry := inBubble(t, storm.Storm(), client(t, "no retry"))
	base, ok := noRetry.Recovered(stallEnd, 0.95)
	require.True(t, ok, "the client that never retries recovers")
	t.Logf("no retry: recovered %v after the stall, %.2f%% success", base, 100*noRetry.Success())

	if !raceEnabled { // plain retries' storm is the heaviest run of all: about 4,000 goroutines at a time
		plain := inBubble(t, storm.Storm(), client(t, "plain retries"))
		_, ok = plain.Recovered(stallEnd, 0.95)
		require.False(t, ok, "plain retries recover, so the scenario is no storm")
		require.Less(t, plain.Goodput[len(plain.Goodput)-1], 0.5, "plain retries' last second")
	}

	guard := storm.Guarded()
	t.Run("storm", func(t *testing.T) {
		r := inBubble(t, storm.Storm(), guard)
		after, ok := r.Recovered(stallEnd, 0.95)
		require.True(t, ok, "the guarded client never recovers: %v", r.Goodput)
		t.Logf("guard: recovered %v after the stall, %.2f%% success, %.4f attempts per call", after, 100*r.Success(), r.Amplification())
		require.LessOrEqual(t, after, base+time.Second, "recovery beside the client that never retries")
	})
	t.Run("sporadic", func(t *testing.T) {
		r := inBubble(t, storm.Sporadic(), guard)
		t.Logf("guard: %.3f%% success, %.4f attempts per call", 100*r.Success(), r.Amplification())
		require.GreaterOrEqual(t, r.Success(), 0.999, "success with one attempt in ten failing at random")
		// Without retries 90 % succeed; the guard's success is the retries'.
		require.Greater(t, r.Amplification(), 1.1)
	})
	for _, o := range []struct {
		name   string
		outage storm.Outage
	}{{"outage-fast", storm.FastOutage}, {"outage-by-timeout", storm.SlowOutage}} {
		t.Run(o.name, func(t *testing.T) {
			r := inBubble(t, storm.Down(o.outage), guard)
			// The floor: fewer than capacity/2 retries in all (policy.Guard).
			floor := 10 / 2.0
			t.Logf("guard: %d attempts for %d calls", r.Attempts, r.Calls)
			require.LessOrEqual(t, float64(r.Attempts), 1.1*float64(r.Calls)+floor)
			require.Zero(t, r.Succeeded)
		})
	}
}

func TestRecovered(t *testing.T) {
	r := storm.Result{Goodput: []float64{1, 1, 0, 0.5, 0.96, 0.9, 0.95, 1}}
	after, ok := r.Recovered(3*time.Second, 0.95)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, after, "from the start of second 6")
	after, ok = r.Recovered(7*time.Second, 0.95)
	require.True(t, ok)
	require.Zero(t, after, "recovered before the time asked")
	r.Goodput[7] = 0.94
	_, ok = r.Recovered(3*time.Second, 0.95)
	require.False(t, ok)
}

func TestRunsAreDeterministicOnTheVirtualClock(t *testing.T) {
	s := storm.Storm()
	s.Duration = 10 * time.Second
	if raceEnabled {
		s.Duration = 2 * time.Second
	}
	a := storm.RunVirtual(s, storm.Retrying())
	b := storm.RunVirtual(s, storm.Retrying())
	require.Equal(t, a, b)
}
