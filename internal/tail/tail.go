// Package tail simulates the latency scenario of hedged calls: a server
// that answers in 10 ms, except for 2 % of attempts that take 1 s, called
// 10,000 times. The repository's tests and the bench module run it inside
// testing/synctest, where the real clock's time is virtual; examples/hedge
// runs it on the real clock, scaled down.
package tail

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/internal/draw"
)

// Scenario is the server and the traffic of one run.
type Scenario struct {
	Calls   int           // calls in all
	Workers int           // callers, each making its share of the calls one after another
	Fast    time.Duration // an attempt's usual time
	Slow    time.Duration // a slow attempt's time
	Share   float64       // the share of attempts that are slow, each drawn apart
	Seed    uint64
}

// Tail is the scenario of the hedging goal: 10,000 calls by 100 callers
// against a server that answers in 10 ms, and in 1 s for 2 % of attempts.
func Tail() Scenario {
	return Scenario{Calls: 10_000, Workers: 100, Fast: 10 * time.Millisecond, Slow: time.Second, Share: 0.02, Seed: 1}
}

// Scaled returns s with its times divided by k (Tail().Scaled(10): 1 ms and
// 100 ms), for a run on the real clock.
func (s Scenario) Scaled(k int) Scenario {
	s.Fast /= time.Duration(k)
	s.Slow /= time.Duration(k)
	return s
}

// Caller makes one call of attempt, retrying or hedging as it likes, and
// returns its error. Every attempt must go through attempt, started before
// the call returns.
type Caller func(ctx context.Context, attempt func(context.Context) error) error

// Result is what one run measured.
type Result struct {
	Latencies []time.Duration // of every call, in increasing order
	Attempts  int
	Failed    int
}

// Percentile returns the latency below which a share q of the calls ended
// (the nearest rank).
func (r Result) Percentile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.Latencies))+0.999999) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// Extra returns the attempts beyond one per call, per call.
func (r Result) Extra() float64 {
	return float64(r.Attempts-len(r.Latencies)) / float64(len(r.Latencies))
}

// Run runs s, every call made by call. Attempts wait on the real clock's
// timers and return ctx's error at once when their context ends first.
func Run(s Scenario, call Caller) Result {
	var (
		attempts atomic.Int64
		failed   atomic.Int64
		next     atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, s.Calls)
		wg       sync.WaitGroup
	)
	for range s.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(s.Calls) {
					return
				}
				var k atomic.Uint64 // the call's attempts, hedges included
				start := time.Now()
				err := call(context.Background(), func(ctx context.Context) error {
					attempts.Add(1)
					d := s.Fast
					if draw.Unit(s.Seed, uint64(i), k.Add(1)) < s.Share {
						d = s.Slow
					}
					t := time.NewTimer(d)
					defer t.Stop()
					select {
					case <-t.C:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
				took := time.Since(start)
				if err != nil {
					failed.Add(1)
				}
				mu.Lock()
				lat = append(lat, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	return Result{Latencies: lat, Attempts: int(attempts.Load()), Failed: int(failed.Load())}
}
