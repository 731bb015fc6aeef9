//go:build go1.25

package policy_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

var t0 = time.Unix(1_000_000, 0)

// TestGuardRecordTable checks each row of the table in the Guard's doc on
// the guard itself: capacity 10, r = 0.5, from 5 tokens, from the line of
// nine tenths for slow successes, and from none to check the floor.
func TestGuardRecordTable(t *testing.T) {
	const r = 0.5
	for _, tt := range []struct {
		name  string
		from  float64
		do    func(g *policy.Guard)
		delta float64
	}{
		{"first-try success", 5, func(g *policy.Guard) { g.Record(false, policy.Succeeded) }, +r},
		{"retry success", 5, func(g *policy.Guard) { g.Record(true, policy.Succeeded) }, +r},
		{"success at the capacity", 10, func(g *policy.Guard) { g.Record(false, policy.Succeeded) }, 0},
		{"first-try slow success", 5, func(g *policy.Guard) { g.Record(false, policy.Slow) }, +r},
		{"retry slow success", 5, func(g *policy.Guard) { g.Record(true, policy.Slow) }, +r},
		{"slow success near nine tenths", 8.75, func(g *policy.Guard) { g.Record(true, policy.Slow) }, +0.25},
		{"slow success above nine tenths", 9.5, func(g *policy.Guard) { g.Record(false, policy.Slow) }, 0},
		{"first try fails fast", 5, func(g *policy.Guard) { g.Record(false, policy.Failed) }, -r / 2},
		{"retry fails fast", 5, func(g *policy.Guard) { g.Record(true, policy.Failed) }, -1},
		{"first try shows overload", 5, func(g *policy.Guard) { g.Record(false, policy.Overloaded) }, -1},
		{"retry shows overload", 5, func(g *policy.Guard) { g.Record(true, policy.Overloaded) }, -2},
		{"overload at the floor", 0, func(g *policy.Guard) { g.Record(true, policy.Overloaded) }, 0},
		{"asking for a retry, admitted", 5, func(g *policy.Guard) { require.True(t, g.Allow(t0)) }, 0},
		{"asking for a retry, denied", 0.75, func(g *policy.Guard) {
			require.True(t, g.Allow(t0), "the probe")
			require.False(t, g.Allow(t0))
		}, 0},
		{"starting a hedge", 10, func(g *policy.Guard) { require.True(t, g.AllowHedge()) }, -1},
		{"a hedge from above nine tenths", 9.25, func(g *policy.Guard) { require.True(t, g.AllowHedge()) }, -1},
		{"no hedge at nine tenths", 9, func(g *policy.Guard) { require.False(t, g.AllowHedge()) }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := policy.NewGuard(10, r)
			for g.Tokens()-tt.from >= 1 {
				g.Record(true, policy.Failed)
			}
			for g.Tokens()-tt.from >= r/2 {
				g.Record(false, policy.Failed)
			}
			require.InDelta(t, tt.from, g.Tokens(), 1e-9)
			tt.do(g)
			require.InDelta(t, tt.delta, g.Tokens()-tt.from, 1e-9)
		})
	}
}

func TestGuardRetriesThatFailTakeATokenEach(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	require.Equal(t, 10.0, g.Tokens(), "a new guard is full")
	for i := range 10 {
		require.True(t, g.Allow(t0), "retry %d", i+1)
		require.Equal(t, float64(10-i), g.Tokens(), "asking takes nothing")
		g.Record(true, policy.Failed)
	}
	require.Zero(t, g.Tokens())
	require.True(t, g.Allow(t0), "no token left: a probe")
	require.False(t, g.Allow(t0.Add(999*time.Millisecond)), "no token left, and no second probe within a second")
}

func TestGuardLetsOneProbeASecondThroughWhenEmpty(t *testing.T) {
	g := policy.NewGuard(1, 1)
	g.Record(true, policy.Failed)
	require.True(t, g.Allow(t0), "the first probe")
	g.Record(true, policy.Failed)
	for d := time.Duration(0); d < time.Second; d += 100 * time.Millisecond {
		require.False(t, g.Allow(t0.Add(d)), "a second probe %v after the first", d)
	}
	require.True(t, g.Allow(t0.Add(time.Second)), "a probe a second later")
	g.Record(true, policy.Succeeded) // it succeeds: the ratio comes back
	require.Equal(t, 1.0, g.Tokens(), "capped at the capacity")
	require.True(t, g.Allow(t0.Add(time.Second)))
}

func TestGuardRetriesThatSucceedCostNothing(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	for range 1000 {
		require.True(t, g.Allow(t0))
		g.Record(true, policy.Succeeded)
	}
	require.Equal(t, 10.0, g.Tokens())
}

func TestGuardFirstTriesFailingFastCostHalfTheRatio(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	for range 4 {
		g.Record(false, policy.Failed)
	}
	require.Equal(t, 9.0, g.Tokens())
	for range 1000 { // two in three fail: the guard holds
		g.Record(false, policy.Failed)
		g.Record(false, policy.Failed)
		g.Record(false, policy.Succeeded)
	}
	require.InDelta(t, 9.0, g.Tokens(), 1e-9, "two failures in three make up for the success between them")
	for range 100 { // a burst of first tries that all fail leaves nothing for their retries
		g.Record(false, policy.Failed)
	}
	require.Zero(t, g.Tokens())
}

func TestGuardOverloadTakesATokenFirstTriesIncluded(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	for range 4 {
		g.Record(false, policy.Overloaded)
	}
	require.Equal(t, 6.0, g.Tokens())
	require.True(t, g.Allow(t0))
	g.Record(true, policy.Overloaded) // a retry that timed out: one for failing, one for the overload
	require.Equal(t, 4.0, g.Tokens())
	for range 100 {
		g.Record(false, policy.Overloaded)
	}
	require.Zero(t, g.Tokens(), "never negative")
	for range 8 {
		g.Record(false, policy.Succeeded)
	}
	require.Equal(t, 4.0, g.Tokens(), "each success adds the ratio")
}

func TestGuardSlowSuccessAddsNothingAboveTheHedgeLine(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	g.Record(false, policy.Overloaded)
	g.Record(false, policy.Slow)
	require.Equal(t, 9.0, g.Tokens(), "a slow success adds nothing above nine tenths")
	for range 10 {
		g.Record(false, policy.Overloaded)
	}
	for range 30 {
		g.Record(true, policy.Slow)
	}
	require.Equal(t, 9.0, g.Tokens(), "slow successes fill the guard up to nine tenths")
	require.False(t, g.AllowHedge(), "and do not open it to hedges")
	g.Record(false, policy.Succeeded)
	g.Record(false, policy.Succeeded)
	require.True(t, g.AllowHedge(), "fast successes do")
}

func TestGuardHedgesTakeATokenAndStopAtNineTenths(t *testing.T) {
	g := policy.NewGuard(50, 1)
	hedges := 0
	for g.AllowHedge() { // each loses: its token stays spent
		hedges++
		require.Less(t, hedges, 100)
	}
	require.Equal(t, 5, hedges, "hedges that lose spend a tenth of the guard")
	require.Equal(t, 45.0, g.Tokens())
	require.True(t, g.Allow(t0), "the rest is for retries")
	g.Record(false, policy.Succeeded)
	require.True(t, g.AllowHedge(), "a fast success lifts it above the line")
	g.Record(true, policy.Succeeded) // the hedge wins: the ratio comes back
	require.Equal(t, 46.0, g.Tokens())
	var zero policy.Guard
	require.False(t, zero.AllowHedge(), "an empty guard never hedges")
}

// A guard of any capacity hedges while it holds more than nine tenths of
// it. Hedges that lose spend a tenth of the capacity, rounded up to a
// whole token, and then stop: a guard of fewer than ten tokens lets one
// through.
func TestGuardHedgesAtEveryCapacity(t *testing.T) {
	for _, tt := range []struct {
		capacity float64
		hedges   int
	}{
		{1, 1}, {2, 1}, {5, 1}, {9, 1}, {9.5, 1}, {10, 1}, {15, 2}, {50, 5}, {1000, 100},
	} {
		g := policy.NewGuard(tt.capacity, 1)
		require.NoError(t, policy.Default().WithGuard(g).WithHedging(policy.Hedging{Delay: time.Millisecond}).Validate())
		hedges := 0
		for g.AllowHedge() { // each loses: its token stays spent
			hedges++
			require.LessOrEqual(t, hedges, tt.hedges, "capacity %v", tt.capacity)
		}
		require.Equal(t, tt.hedges, hedges, "capacity %v", tt.capacity)
		require.InDelta(t, tt.capacity-float64(tt.hedges), g.Tokens(), 1e-9, "capacity %v", tt.capacity)
		g.Record(false, policy.Slow)
		require.False(t, g.AllowHedge(), "capacity %v: a slow success does not open it again", tt.capacity)
	}
	g := policy.NewGuard(1, 0.05)
	require.True(t, g.AllowHedge())
	for range 19 {
		g.Record(false, policy.Succeeded)
	}
	require.InDelta(t, 0.95, g.Tokens(), 1e-9)
	require.True(t, g.AllowHedge(), "above nine tenths, with less than a token")
	require.Zero(t, g.Tokens(), "the hedge takes what is left, never below zero")
}

// A dependency failing attempts at random, retried up to 4 attempts: the
// guard of NewGuard(50, 1) keeps the retries of sequential calls up to half
// the attempts failing, since its successes make up for the failures.
func TestGuardKeepsRetriesUnderIndependentFailures(t *testing.T) {
	for _, rate := range []float64{0.1, 0.2, 0.3, 0.4, 0.5} {
		g := policy.NewGuard(50, 1)
		denied := 0
		state := uint64(1)
		fails := func() bool {
			state = state*6364136223846793005 + 1442695040888963407
			return float64(state>>11)/(1<<53) < rate
		}
		for range 100000 {
			for attempt := range 4 {
				retry := attempt > 0
				if retry && !g.Allow(t0) {
					denied++
					break
				}
				if !fails() {
					g.Record(retry, policy.Succeeded)
					break
				}
				g.Record(retry, policy.Failed)
			}
		}
		t.Logf("%v%% failing: %d of 100,000 calls denied a retry", rate*100, denied)
		require.Less(t, denied, 500, "%v%% failing: %d of 100,000 calls denied a retry", rate*100, denied)
	}
}

// stalled records n attempts that timed out, and starts first attempts
// until n are running, each ended when the test ends.
func stalled(t *testing.T, g *policy.Guard, n int) {
	t.Helper()
	for range n {
		g.Record(false, policy.Overloaded)
		require.Nil(t, g.Enter())
		t.Cleanup(g.Leave)
	}
}

// The guard holds first attempts back once the last 16 attempts in a row
// showed overload and 16 attempts are running; the first answer lets them
// through again.
func TestGuardHoldsNewCallsBackWhileStalled(t *testing.T) {
	for _, tt := range []struct {
		name    string
		run     int // attempts in a row that timed out
		running int
		answer  func(g *policy.Guard) // after the run; nil: none
		held    bool
	}{
		{"15 timeouts in a row", 15, 16, nil, false},
		{"16 timeouts, 15 attempts running", 16, 15, nil, false},
		{"16 timeouts, 16 attempts running", 16, 16, nil, true},
		{"16 timeouts, 100 attempts running", 16, 100, nil, true},
		{"then a success", 16, 16, func(g *policy.Guard) { g.Record(false, policy.Succeeded) }, false},
		{"then a slow success", 16, 16, func(g *policy.Guard) { g.Record(true, policy.Slow) }, false},
		{"then a fast failure", 16, 16, func(g *policy.Guard) { g.Record(true, policy.Failed) }, false},
		{"then more timeouts", 16, 16, func(g *policy.Guard) { g.Record(true, policy.Overloaded) }, true},
		{"a success, then 15 timeouts", 16, 16, func(g *policy.Guard) {
			g.Record(false, policy.Succeeded)
			for range 15 {
				g.Record(false, policy.Overloaded)
			}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := policy.NewGuard(50, 1)
			for range tt.run {
				g.Record(false, policy.Overloaded)
			}
			for range tt.running {
				g.Run()
				t.Cleanup(g.Leave)
			}
			if tt.answer != nil {
				tt.answer(g)
			}
			require.Equal(t, tt.held, g.Held())
			turn := g.Enter()
			if !tt.held {
				require.Nil(t, turn)
				g.Leave()
				return
			}
			require.NotNil(t, turn)
			g.Abandon(turn)
			require.False(t, g.Held() && tt.running < 16)
		})
	}
}

// Calls that wait between attempts, or have not started one, take no room:
// 100 calls in flight with nothing running hold nothing back.
func TestGuardCallsBetweenAttemptsTakeNoRoom(t *testing.T) {
	g := policy.NewGuard(50, 1)
	for range 100 {
		g.Start()
		t.Cleanup(g.Done)
	}
	stalled(t, g, 0)
	for range 16 {
		g.Record(false, policy.Overloaded)
	}
	require.True(t, g.Stalled())
	require.False(t, g.Held())
	require.Nil(t, g.Enter())
	g.Leave()
}

// A call held back gets its turn, first come first served, when a running
// attempt ends; the first answer lets every call waiting through.
func TestGuardTurnsComeInOrder(t *testing.T) {
	g := policy.NewGuard(50, 1)
	stalled(t, g, 16)
	a, b := g.Enter(), g.Enter()
	require.NotNil(t, a)
	require.NotNil(t, b)
	require.Nil(t, policy.Turned(a))
	g.Leave() // one of the 16 ends: a's turn
	require.NotNil(t, policy.Turned(a), "the first call waiting has its turn")
	require.Nil(t, policy.Turned(b), "the second waits on")
	c := g.Enter()
	require.NotNil(t, c, "a new call waits behind those already waiting")
	g.Record(false, policy.Succeeded) // an answer: no stall
	require.NotNil(t, policy.Turned(b))
	require.NotNil(t, policy.Turned(c))
	require.Equal(t, int64(18), policy.Running(g), "15 of the 16, a, b and c")
	for range 3 {
		g.Leave()
	}
	g.Run() // the one the test's cleanup ends in place of the one Leave above ended
}

// A call that gives up waiting leaves the line; a turn that came to it as
// it gave up goes to the next call waiting.
func TestGuardAbandon(t *testing.T) {
	g := policy.NewGuard(50, 1)
	stalled(t, g, 16)
	a, b := g.Enter(), g.Enter()
	g.Abandon(a)
	g.Leave()
	require.NotNil(t, policy.Turned(b), "a gave up: the room goes to b")
	c := g.Enter()
	g.Leave() // c's turn
	require.NotNil(t, policy.Turned(c))
	g.Abandon(c) // too late: its room goes back
	require.Equal(t, int64(15), policy.Running(g), "14 of the 16 and b")
	g.Abandon(b)
	g.Run()
	g.Run()
}

// Attempts that never end cannot hold calls back for good: a call held
// back goes through as the guard's probe a second.
func TestGuardProbeLetsAHeldCallThrough(t *testing.T) {
	g := policy.NewGuard(50, 1)
	stalled(t, g, 16)
	a, b := g.Enter(), g.Enter()
	require.True(t, g.Probe(b, t0), "the first probe")
	require.False(t, g.Probe(a, t0.Add(999*time.Millisecond)), "one probe a second")
	require.False(t, g.Allow(t0.Add(999*time.Millisecond)) && g.Tokens() < 1, "retries share the probe")
	require.True(t, g.Probe(a, t0.Add(time.Second)))
	require.Equal(t, int64(18), policy.Running(g))
	g.Leave()
	g.Leave()
}

func TestGuardValidation(t *testing.T) {
	for _, tt := range []struct {
		tokens, ratio float64
		ok            bool
	}{
		{10, 0.4, true},
		{1, 0.000001, true},
		{1_000_000, 1_000_000, true},
		{0, 0.1, false},
		{0.5, 0.1, false},
		{-1, 0.1, false},
		{math.NaN(), 0.1, false},
		{math.Inf(1), 0.1, false},
		{1_000_000 + 1, 1, false},
		{10, 0, false},
		{10, 1e-7, false},
		{10, -0.1, false},
		{10, 11, false},
		{10, math.NaN(), false},
		{10, math.Inf(1), false},
	} {
		g := policy.NewGuard(tt.tokens, tt.ratio)
		err := policy.Default().WithGuard(g).Validate()
		if tt.ok {
			require.NoError(t, err, "NewGuard(%v, %v)", tt.tokens, tt.ratio)
			continue
		}
		require.ErrorIs(t, err, policy.ErrInvalid, "NewGuard(%v, %v)", tt.tokens, tt.ratio)
		require.ErrorContains(t, err, "guard")
		require.Zero(t, g.Tokens(), "an invalid guard holds nothing")
		require.Equal(t, "guard (invalid)", g.String())
	}
}

func TestZeroGuardAdmitsOnlyProbes(t *testing.T) {
	var g policy.Guard
	g.Record(false, policy.Succeeded)
	require.Zero(t, g.Tokens())
	require.True(t, g.Allow(t0), "a probe")
	require.False(t, g.Allow(t0))
}

func TestPolicyWithGuard(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	p := policy.Exponential(time.Second)
	q := p.WithGuard(g)
	require.Nil(t, p.Guard(), "the receiver is unchanged")
	require.Same(t, g, q.Guard())
	require.Equal(t, p.String(), q.String(), "a guard is wiring, not text")
	require.Nil(t, q.WithGuard(nil).Guard())
	require.Equal(t, "guard 10 tokens ratio 0.5", g.String())
	require.Equal(t, "no guard", p.Guard().String(), "a policy's nil guard prints")
	require.Zero(t, p.Guard().Tokens())
}

func TestGuardConcurrentUse(t *testing.T) {
	g := policy.NewGuard(100, 1)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			now := t0
			for i := range 10000 {
				now = now.Add(time.Millisecond)
				g.Start()
				defer g.Done()
				if turn := g.Enter(); turn != nil {
					g.Abandon(turn)
				} else {
					defer g.Leave()
				}
				switch (i + w) % 4 {
				case 0:
					g.Record(g.Allow(now), policy.Failed)
				case 1:
					g.Record(g.Allow(now), policy.Succeeded)
				case 2:
					g.Record(false, policy.Overloaded)
				default:
					if g.AllowHedge() {
						g.Record(true, policy.Slow)
					}
				}
			}
		})
	}
	wg.Wait()
	require.GreaterOrEqual(t, g.Tokens(), 0.0)
	require.LessOrEqual(t, g.Tokens(), 100.0)
	require.Zero(t, policy.InFlight(g), "every call that started has ended")
	require.Zero(t, policy.Running(g), "every attempt that started has ended")
}

func TestGuardAllocations(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		g.Record(false, policy.Succeeded)
		g.Record(g.Allow(t0), policy.Failed)
		_ = g.AllowHedge()
		g.Record(false, policy.Overloaded)
	}))
	for range 20 { // attempts running, so that Enter looks at the stall
		g.Run()
		defer g.Leave()
	}
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		g.Start()
		if g.Enter() != nil {
			panic("held back")
		}
		g.Record(false, policy.Succeeded)
		g.Leave()
		g.Done()
	}), "a first-try success while the guard lets calls through")
}

// FuzzGuard runs any sequence of outcomes, questions and calls starting
// and ending against a guard of any capacity and ratio, and checks its
// bounds: never negative, never above the capacity, tokens exactly as the
// rule says, a retry admitted from a token exactly when one is left or its
// call is alone in flight, at most one probe a second otherwise, a call
// held back exactly when 16 are in flight after 16 overloads in a row, and
// no panic or overflow for any setting.
func FuzzGuard(f *testing.F) {
	f.Add(10.0, 0.5, []byte{0, 0, 0, 0, 0, 1, 1, 4, 4, 4, 9, 6})
	f.Add(1.0, 1.0, []byte{1, 0, 2, 5, 3, 8})
	f.Add(1e6, 1e6, []byte{1, 1, 1, 0})
	f.Add(math.Inf(1), math.NaN(), []byte{0})
	stall := []byte{}
	for range 17 {
		stall = append(stall, 4, 16) // an overload, a first attempt
	}
	f.Add(50.0, 1.0, append(stall, 16, 22, 18, 2, 16, 20, 16))
	f.Fuzz(func(t *testing.T, tokens, ratio float64, ops []byte) {
		g := policy.NewGuard(tokens, ratio)
		valid := policy.Default().WithGuard(g).Validate() == nil
		capacity := g.Tokens()
		if !valid && capacity != 0 {
			t.Fatalf("NewGuard(%v, %v) is invalid but holds %v tokens", tokens, ratio, capacity)
		}
		if valid && math.Abs(capacity-tokens) > 1e-6 {
			t.Fatalf("NewGuard(%v, %v) holds %v tokens at first", tokens, ratio, capacity)
		}
		if !valid {
			ratio = 0
		}
		// The guard counts in millionths of a token.
		ratio = math.Round(ratio*1e6) / 1e6
		half := math.Floor(ratio*1e6/2) / 1e6
		want := capacity
		now, lastProbe := t0, time.Time{}
		inFlight, run := 0, 0                 // calls in flight; attempts in a row that showed overload
		running, queue := 0, []*policy.Turn{} // attempts running; calls held back, in order
		answer := func() {                    // the first answer after a stall lets every call waiting through
			if run > 0 {
				running += len(queue)
				for _, q := range queue {
					require.NotNil(t, policy.Turned(q), "a call waiting through an answer")
				}
				queue = queue[:0]
			}
			run = 0
		}
		for _, op := range ops {
			now = now.Add(time.Duration(op>>4) * 100 * time.Millisecond)
			admitted := op&1 == 1
			had := g.Tokens()
			switch op >> 1 % 12 {
			case 0: // a retry asked for
				got := g.Allow(now)
				switch {
				case had >= 1:
					require.True(t, got, "Allow with %v tokens", had)
				case inFlight == 1:
					require.True(t, got, "Allow for the one call in flight")
				case lastProbe.IsZero() || now.Sub(lastProbe) >= time.Second:
					require.True(t, got, "a probe %v after the last", now.Sub(lastProbe))
					lastProbe = now
				default:
					require.False(t, got, "a second probe %v after the last", now.Sub(lastProbe))
				}
			case 1:
				g.Record(admitted, policy.Succeeded)
				want = max(min(want+ratio, capacity), want)
				answer()
			case 2:
				g.Record(admitted, policy.Overloaded)
				run++
				want = max(want-1, 0)
				if admitted {
					want = max(want-1, 0)
				}
			case 3:
				line := math.Floor(math.Round(capacity*1e6)/10) * 9 / 1e6
				got := g.AllowHedge()
				if got != (math.Round(had*1e6) > math.Round(line*1e6)) {
					t.Fatalf("AllowHedge() = %v with %v of %v tokens", got, had, capacity)
				}
				if got {
					want = max(want-1, 0)
				}
			case 4:
				g.Record(admitted, policy.Slow)
				answer()
				line := math.Floor(math.Round(capacity*1e6)/10) * 9 / 1e6
				want = max(min(want+ratio, line), want)
			case 5:
				g.Record(admitted, policy.Failed)
				answer()
				if admitted {
					want = max(want-1, 0)
				} else {
					want = max(want-half, 0)
				}
			case 6:
				g.Start()
				inFlight++
			case 7:
				if inFlight > 0 { // Done only ends a call Start began
					g.Done()
					inFlight--
				}
			case 8:
				turn := g.Enter()
				if held := turn != nil; held != (len(queue) > 0 || run >= 16 && running >= 16) {
					t.Fatalf("Enter() held back %v with %d running and %d waiting after %d overloads in a row", held, running, len(queue), run)
				}
				if turn == nil {
					running++
				} else {
					queue = append(queue, turn)
				}
			case 9:
				if running > 0 { // Leave only ends an attempt that ran
					g.Leave()
					running--
					for len(queue) > 0 && (run < 16 || running < 16) {
						require.NotNil(t, policy.Turned(queue[0]), "the first call waiting, when an attempt ends")
						queue, running = queue[1:], running+1
					}
				}
			case 10:
				if len(queue) > 0 {
					g.Abandon(queue[len(queue)-1])
					queue = queue[:len(queue)-1]
				}
			case 11:
				if len(queue) > 0 {
					due := lastProbe.IsZero() || now.Sub(lastProbe) >= time.Second
					if got := g.Probe(queue[0], now); got != due {
						t.Fatalf("Probe() = %v, %v after the last probe", got, now.Sub(lastProbe))
					}
					if due {
						lastProbe, queue, running = now, queue[1:], running+1
					}
				}
			}
			for i, q := range queue {
				if policy.Turned(q) != nil {
					t.Fatalf("call %d of %d waiting has had its turn", i, len(queue))
				}
			}
			got := g.Tokens()
			if got < 0 || got > capacity || math.IsNaN(got) {
				t.Fatalf("%v tokens, outside [0, %v]", got, capacity)
			}
			if math.Abs(got-want) > 1e-6*float64(len(ops)+1) {
				t.Fatalf("%v tokens, want %v", got, want)
			}
		}
	})
}

// BenchmarkGuard is the guard's work per attempt, from every P at once: an
// outcome recorded and, after a failure, a retry asked for.
func BenchmarkGuard(b *testing.B) {
	for _, tt := range []struct {
		name string
		fail int // one attempt in fail fails
	}{{"healthy", 0}, {"one-in-ten-fails", 10}, {"down", 1}} {
		b.Run(tt.name, func(b *testing.B) {
			g := policy.NewGuard(10, 0.5)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					if tt.fail > 0 && i%tt.fail == 0 {
						g.Record(false, policy.Failed)
						sinkBool = g.Allow(t0)
					} else {
						g.Record(false, policy.Succeeded)
					}
				}
			})
		})
	}
}

var sinkBool bool
