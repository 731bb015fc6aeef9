//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// TestStressParkedCalls parks 100,000 calls in a back-off at once, inside a
// synctest bubble (the real clock, fake time), cancels them all, and checks
// that every one returns with the cancellation and its last error.
func TestStressParkedCalls(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allows 8128 live goroutines; CI runs this without -race")
	}
	calls := 100_000
	if testing.Short() {
		calls = 10_000
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := policy.Default()
		var returned, kept atomic.Int64
		var wg sync.WaitGroup
		for range calls {
			wg.Go(func() {
				err := retry.Do(ctx, func(context.Context) error { return errFlaky }, p)
				returned.Add(1)
				if errors.Is(err, context.Canceled) && errors.Is(err, errFlaky) {
					kept.Add(1)
				}
			})
		}
		synctest.Wait() // every call is parked in its 10s wait
		require.Zero(t, returned.Load())
		start := time.Now()
		cancel()
		wg.Wait()
		require.Equal(t, int64(calls), returned.Load())
		require.Equal(t, int64(calls), kept.Load())
		require.Zero(t, time.Since(start), "no fake time passed: nobody waited for a timer")
	})
}

// TestStressGroupWithGuard runs a 1,000-way errgroup against an operation
// that fails at random, all sharing one guard; under -race in CI.
func TestStressGroupWithGuard(t *testing.T) {
	guard := policy.NewGuard(10, 0.5)
	p := policy.Exponential(time.Microsecond).WithCap(50 * time.Microsecond).WithMaxAttempts(5).WithGuard(guard)
	var g errgroup.Group
	g.SetLimit(64)
	var attempts, denied, exhausted, ok atomic.Int64
	for i := range 1000 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		retry.Go(context.Background(), &g, func(context.Context) error {
			attempts.Add(1)
			if r.Float64() < 0.3 {
				return errFlaky
			}
			return nil
		}, p, retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) {
			switch {
			case e.Err == nil:
				ok.Add(1)
			case errors.Is(e.Err, retry.ErrThrottled):
				denied.Add(1)
			case errors.Is(e.Err, retry.ErrExhausted):
				exhausted.Add(1)
			}
		}}))
	}
	err := g.Wait()
	require.Equal(t, int64(1000), ok.Load()+denied.Load()+exhausted.Load(), "every call ended in one of the three ways")
	require.Equal(t, err != nil, denied.Load()+exhausted.Load() > 0)
	require.GreaterOrEqual(t, ok.Load(), int64(990), "retries that pay off are admitted: 30%% failing loses next to nothing")
	require.Less(t, attempts.Load(), int64(1000*1.5), "about 1/0.7 attempts per call")
}

// TestCancelLatency cancels calls parked in a 300s wait on the real clock
// and checks that they return within 5ms (the median of several runs, to
// tolerate a slow machine); waiting for the timer would take 300s.
func TestCancelLatency(t *testing.T) {
	const runs = 9
	var lat []time.Duration
	for range runs {
		opt, parked := parkedSignal()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- retry.Do(ctx, fails(100, errFlaky).op, policy.Constant(300*time.Second), opt) }()
		<-parked
		runtime.Gosched()
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			lat = append(lat, time.Since(start))
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("Do waited for its timer instead of returning on cancel")
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("cancel latency: median %v, max %v", lat[runs/2], lat[runs-1])
	require.Less(t, lat[runs/2], 5*time.Millisecond)
}

// BenchmarkParkedCallMemory reports the memory a call parked in a back-off
// holds beyond its goroutine: the heap and stack bytes of 10,000 goroutines
// parked in retry.Do, less those of 10,000 goroutines parked on a plain
// channel receive. Target: at most 1 KiB per parked call.
func BenchmarkParkedCallMemory(b *testing.B) {
	const parked = 10_000
	// park starts parked goroutines running body, waits until each has
	// signalled that it is about to block, and returns the memory they hold.
	park := func(body func(ctx context.Context, signal chan<- struct{})) (heap, stack float64) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ctx, cancel := context.WithCancel(context.Background())
		signal := make(chan struct{}, parked)
		var wg sync.WaitGroup
		for range parked {
			wg.Go(func() { body(ctx, signal) })
		}
		for range parked {
			<-signal
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		cancel()
		wg.Wait()
		return float64(after.HeapAlloc) - float64(before.HeapAlloc), float64(after.StackInuse) - float64(before.StackInuse)
	}
	p := policy.Constant(time.Hour)
	for b.Loop() {
		baseHeap, baseStack := park(func(ctx context.Context, signal chan<- struct{}) {
			signal <- struct{}{}
			<-ctx.Done()
		})
		heap, stack := park(func(ctx context.Context, signal chan<- struct{}) {
			hooks := retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { signal <- struct{}{} }})
			_ = retry.Do(ctx, func(context.Context) error { return errFlaky }, p, hooks)
		})
		b.ReportMetric((heap-baseHeap)/parked, "heap-B/call")
		b.ReportMetric((stack-baseStack)/parked, "stack-B/call")
	}
}
