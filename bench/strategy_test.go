package bench

import (
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/retrykit/retrykit/backoff"
)

// strategyDelays is how many delays BenchmarkStrategy takes from each
// stateful back-off: the first 20 of 10s ×2 capped at 300s.
const strategyDelays = 20

// heldStrategy keeps a Strategy where the compiler cannot know its concrete
// type, as a struct field set elsewhere would: every Next is a dynamic call.
type heldStrategy struct{ s backoff.Strategy }

//go:noinline
func holdStrategy(s backoff.Strategy) *heldStrategy { return &heldStrategy{s} }

// BenchmarkStrategy starts a stateful back-off over and takes its first 20
// delays: backoff.Default's Reset and 20 Next calls, beside a hand-written
// doubling loop and k8s's wait.Backoff.Step.
func BenchmarkStrategy(b *testing.B) {
	lib(b, "bare", func(b *testing.B) {
		for b.Loop() {
			d := base
			for range strategyDelays {
				sinkDelay = d
				d = min(d*factor, capDelay)
			}
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		s := backoff.Default()
		for b.Loop() {
			s.Reset()
			for range strategyDelays {
				sinkDelay = s.Next()
			}
		}
	})
	lib(b, "retrykit-dynamic", func(b *testing.B) {
		h := holdStrategy(backoff.Default())
		for b.Loop() {
			h.s.Reset()
			for range strategyDelays {
				sinkDelay = h.s.Next()
			}
		}
	})
	lib(b, "k8s", func(b *testing.B) {
		for b.Loop() {
			// A wait.Backoff starts over by being copied afresh; Steps must
			// outlast the sequence (kubernetes#131122).
			bo := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
			for range strategyDelays {
				sinkDelay = bo.Step()
			}
		}
	})
}

// TestStrategyAgrees checks that every variant of BenchmarkStrategy hands
// out the kubelet sequence, twice over for the Strategy (Reset starts over).
func TestStrategyAgrees(t *testing.T) {
	want := func(i int) time.Duration { return min(base<<i, capDelay) }
	s := holdStrategy(backoff.Default())
	for round := range 2 {
		s.s.Reset()
		bo := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
		for i := range strategyDelays {
			if got := s.s.Next(); got != want(i) {
				t.Fatalf("round %d: Default().Next() #%d = %v, want %v", round, i+1, got, want(i))
			}
			if got := bo.Step(); got != want(i) {
				t.Fatalf("wait.Backoff.Step() #%d = %v, want %v", i+1, got, want(i))
			}
		}
	}
}
