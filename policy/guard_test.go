package policy_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

func TestGuardClosesAfterHalfItsCapacityInFailures(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	require.True(t, g.AllowRetry(), "a new guard is full")
	require.Equal(t, 10.0, g.Tokens())
	for range 4 {
		g.Failure()
		require.True(t, g.AllowRetry())
	}
	g.Failure()
	require.Equal(t, 5.0, g.Tokens())
	require.False(t, g.AllowRetry(), "half the capacity is not more than half")
	for range 100 {
		g.Failure()
	}
	require.Zero(t, g.Tokens(), "never negative")
}

func TestGuardReopensOnSuccesses(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	for range 20 {
		g.Failure()
	}
	for range 12 {
		g.Success()
	}
	require.InDelta(t, 4.8, g.Tokens(), 1e-9)
	require.False(t, g.AllowRetry())
	g.Success()
	require.True(t, g.AllowRetry(), "13 successes put back 5.2 tokens")
	for range 100 {
		g.Success()
	}
	require.Equal(t, 10.0, g.Tokens(), "never above the capacity")
}

// A dependency failing one attempt in ten, retried up to 4 attempts, costs
// about 0.11 tokens per call and refunds 0.4: the default guard stays open.
func TestDefaultGuardKeepsSporadicRetries(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	denied := 0
	for i := range 10000 {
		for attempt := range 4 {
			if i%10 != 0 || attempt > 0 { // every tenth call fails once
				g.Success()
				break
			}
			g.Failure()
			if !g.AllowRetry() {
				denied++
				break
			}
		}
	}
	require.Zero(t, denied)
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
		require.False(t, g.AllowRetry(), "an invalid guard allows nothing")
		require.Equal(t, "guard (invalid)", g.String())
	}
}

func TestZeroGuardAllowsNoRetry(t *testing.T) {
	var g policy.Guard
	g.Success()
	require.False(t, g.AllowRetry())
	g.Failure()
	require.Zero(t, g.Tokens())
}

func TestPolicyWithGuard(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	p := policy.Exponential(time.Second)
	q := p.WithGuard(g)
	require.Nil(t, p.Guard(), "the receiver is unchanged")
	require.Same(t, g, q.Guard())
	require.True(t, q.Simple(), "a guard needs nothing before the first attempt; the first-try path tells it of a success")
	require.Equal(t, p.String(), q.String(), "a guard is wiring, not text")
	require.Nil(t, q.WithGuard(nil).Guard())
	require.True(t, q.WithGuard(nil).Simple())
	require.Equal(t, "guard 10 tokens ratio 0.4", g.String())
	require.Equal(t, "no guard", p.Guard().String(), "a policy's nil guard prints")
	require.Zero(t, p.Guard().Tokens())
	require.NoError(t, q.WithBudget(policy.NewBudget(0.1, 0)).Validate(), "a guard and a budget compose")
}

func TestGuardConcurrentUse(t *testing.T) {
	g := policy.NewGuard(100, 1)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10000 {
				if (i+w)%2 == 0 {
					g.Failure()
				} else {
					g.Success()
				}
				_ = g.AllowRetry()
			}
		})
	}
	wg.Wait()
	// As many successes as failures, each success worth one token: whatever
	// the interleaving, the count stays within its bounds.
	require.GreaterOrEqual(t, g.Tokens(), 0.0)
	require.LessOrEqual(t, g.Tokens(), 100.0)
}

func TestGuardAllocations(t *testing.T) {
	g := policy.NewGuard(10, 0.4)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		g.Failure()
		_ = g.AllowRetry()
		g.Success()
	}))
}

// FuzzGuard runs any sequence of outcomes and questions against a guard of
// any capacity and ratio, and checks its bounds: never negative, never above
// the capacity, a retry allowed exactly when more than half is left, and no
// panic or overflow for any setting.
func FuzzGuard(f *testing.F) {
	f.Add(10.0, 0.4, []byte{0, 0, 0, 0, 0, 1, 1})
	f.Add(1.0, 1.0, []byte{1, 0, 2})
	f.Add(1e6, 1e6, []byte{1, 1, 1, 0})
	f.Add(math.Inf(1), math.NaN(), []byte{0})
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
		want := capacity
		for _, op := range ops {
			switch op % 3 {
			case 0:
				g.Failure()
				want = max(want-1, 0)
			case 1:
				g.Success()
				if valid {
					want = min(want+ratio, capacity)
				}
			case 2:
				if got := g.AllowRetry(); got != (g.Tokens() > capacity/2) {
					t.Fatalf("AllowRetry() = %v with %v of %v tokens", got, g.Tokens(), capacity)
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
// outcome recorded and a retry asked for.
func BenchmarkGuard(b *testing.B) {
	for _, tt := range []struct {
		name string
		fail int // one attempt in fail fails
	}{{"healthy", 0}, {"one-in-ten-fails", 10}, {"down", 1}} {
		b.Run(tt.name, func(b *testing.B) {
			g := policy.NewGuard(10, 0.4)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					if tt.fail > 0 && i%tt.fail == 0 {
						g.Failure()
						sinkBool = g.AllowRetry()
					} else {
						g.Success()
					}
				}
			})
			if allocs := testing.AllocsPerRun(100, func() { g.Failure(); sinkBool = g.AllowRetry(); g.Success() }); allocs != 0 {
				b.Fatalf("%v allocations per attempt", allocs)
			}
		})
	}
}

var sinkBool bool
