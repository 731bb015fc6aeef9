package retrykube_test

import (
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

func TestWhenFollowsThePolicy(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		p    policy.Policy
		want []time.Duration
	}{
		{"client-go's item schedule", policy.Exponential(5 * ms).WithCap(40 * ms), []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 40 * ms}},
		{"kubelet", policy.Default(), []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}},
		{"constant", policy.Constant(time.Second), []time.Duration{time.Second, time.Second}},
		{"factor 1.6", policy.Exponential(time.Second).WithFactor(1.6), []time.Duration{time.Second, 1600 * ms, 2560 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := retrykube.NewRateLimiter[string](tt.p)
				for i, want := range tt.want {
					require.Equal(t, want, l.When("a"), "When #%d", i+1)
					require.Equal(t, i+1, l.NumRequeues("a"))
					time.Sleep(want) // the queue waits the delay before the next failure
				}
				require.Zero(t, l.NumRequeues("b"), "an item never requeued")
				l.Forget("a")
				require.Zero(t, l.NumRequeues("a"), "after Forget")
				require.Equal(t, tt.want[0], l.When("a"), "after Forget: the first delay again")
			})
		})
	}
}

// Every jitter kind stays within [0, cap], and full jitter spreads the
// items that fail together.
func TestWhenJitterWithinTheCap(t *testing.T) {
	const limit = 50 * time.Millisecond
	for name, kind := range map[string]backoff.JitterKind{"full": backoff.Full, "equal": backoff.Equal, "decorrelated": backoff.Decorrelated, "proportional": backoff.Proportional, "symmetric": backoff.Symmetric} {
		t.Run(name, func(t *testing.T) {
			j := backoff.Jitter{Kind: kind}
			if kind == backoff.Proportional || kind == backoff.Symmetric {
				j.Fraction = 0.5
			}
			p := policy.Exponential(5 * time.Millisecond).WithCap(limit).WithJitter(j)
			require.NoError(t, p.Validate())
			l := retrykube.NewRateLimiter[int](p.WithGuard(admission.Off)) // a denied requeue waits past the cap
			seen := map[time.Duration]bool{}
			for n := range 20 {
				for item := range 50 {
					d := l.When(item)
					require.GreaterOrEqual(t, d, time.Duration(0))
					require.LessOrEqual(t, d, limit, "item %d, failure %d", item, n+1)
					seen[d] = true
				}
			}
			require.Greater(t, len(seen), 100, "jittered delays must differ")
		})
	}
}

// An item not requeued for longer than the idle window starts over and
// gives its memory back without a Forget; with no window it never does.
func TestIdleWindow(t *testing.T) {
	p := policy.Exponential(time.Second).WithCap(10 * time.Second)
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](p) // the window: twice the cap
		l.When("a")
		l.When("a")
		time.Sleep(20 * time.Second)
		require.Equal(t, 2, l.NumRequeues("a"), "at the window: not idle yet")
		time.Sleep(time.Nanosecond)
		require.Zero(t, l.NumRequeues("a"), "past the window")
		require.Equal(t, time.Second, l.When("a"), "past the window: the first delay again")
	})
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](p, retrykube.WithIdle(time.Minute), nil)
		l.When("a")
		time.Sleep(time.Minute + 1)
		require.Zero(t, l.NumRequeues("a"))
	})
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](p, retrykube.WithIdle(0))
		l.When("a")
		time.Sleep(1000 * time.Hour)
		require.Equal(t, 2*time.Second, l.When("a"), "no window: the item keeps its place")
	})
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](policy.Exponential(time.Second)) // no cap: no window
		l.When("a")
		time.Sleep(1000 * time.Hour)
		require.Equal(t, 2*time.Second, l.When("a"))
	})
}

// When allocates nothing for an item the limiter already holds, with or
// without jitter.
func TestWhenAllocs(t *testing.T) {
	for _, p := range []policy.Policy{policy.Default(), fullJitter(), fullJitter().WithGuard(policy.NewGuard(1e6, 0.5)), fullJitter().WithGuard(policy.NewGuard(1, 0.5))} {
		l := retrykube.NewRateLimiter[string](p)
		l.When("default/object-1")
		allocs := testing.AllocsPerRun(1000, func() { l.When("default/object-1") })
		require.Zero(t, allocs, "When(known item) allocations, %v", p)
		allocs = testing.AllocsPerRun(1000, func() { l.NumRequeues("default/object-1") })
		require.Zero(t, allocs, "NumRequeues allocations, %v", p)
	}
}

// Many workers share one limiter (run with -race): each item's count is its
// own.
func TestConcurrentUse(t *testing.T) {
	l := retrykube.NewRateLimiter[string](fullJitter())
	const goroutines, items, rounds = 16, 64, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range rounds {
				for i := range items {
					item := strconv.Itoa(g*items + i)
					l.When(item)
					l.NumRequeues(item)
				}
			}
			for i := range items / 2 {
				l.Forget(strconv.Itoa(g*items + i))
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		require.Zero(t, l.NumRequeues(strconv.Itoa(g*items)), "forgotten")
		require.Equal(t, rounds, l.NumRequeues(strconv.Itoa(g*items+items-1)))
	}
}

// Once every item is forgotten the limiter keeps state for none, and so is
// back to its starting size (see retrykube.Items), after having held
// 10,000 items; an item idle past the window is let go of too.
func TestMemoryAfterForget(t *testing.T) {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "default/object-" + strconv.Itoa(i)
	}
	l := retrykube.NewRateLimiter[string](fullJitter())
	require.Zero(t, retrykube.Items(l), "a fresh limiter")
	for range 3 {
		for _, k := range keys {
			l.When(k)
		}
	}
	require.Equal(t, len(keys), retrykube.Items(l), "one entry per item, however often it failed")
	for _, k := range keys {
		l.Forget(k)
	}
	require.Zero(t, retrykube.Items(l), "every item forgotten")

	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](fullJitter(), retrykube.WithIdle(time.Minute))
		for _, k := range keys {
			l.When(k)
		}
		// The table lets go of a generation once every key in it is idle,
		// on the calls that follow: two windows on, one item's failure.
		time.Sleep(time.Minute + 1)
		l.When("live")
		time.Sleep(time.Minute + 1)
		l.When("live")
		require.Equal(t, 1, retrykube.Items(l), "idle items let go of without a Forget")
	})
}

// Composed with client-go's token bucket, as its default is, the limiter
// keeps its per-item delays and the bucket caps the overall rate: past the
// burst, requeues are spaced by the bucket's rate whatever the items.
func TestMaxOfBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := workqueue.NewTypedMaxOfRateLimiter(
			retrykube.NewRateLimiter[string](policy.Default().WithGuard(admission.Off)), // the bucket alone
			&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 100)},
		)
		for i := range 100 {
			require.Equal(t, 10*time.Second, rl.When(strconv.Itoa(i)), "within the burst: the item's own delay")
		}
		for i := range 200 {
			want := max(10*time.Second, time.Duration(i+1)*100*time.Millisecond)
			require.InDelta(t, want, rl.When("late-"+strconv.Itoa(i)), float64(time.Microsecond), "past the burst: the bucket's slot, or the item's delay if longer")
		}
		require.Equal(t, 1, rl.NumRequeues("late-0"))
		rl.Forget("late-0")
		require.Zero(t, rl.NumRequeues("late-0"))
	})
}

// BenchmarkWhen requeues a known item: the per-failure cost a controller
// pays, beside client-go's own item limiter.
func BenchmarkWhen(b *testing.B) {
	for _, bb := range []struct {
		name string
		rl   workqueue.TypedRateLimiter[string]
	}{
		{"NewRateLimiter/full-jitter", retrykube.NewRateLimiter[string](fullJitter())},
		{"client-go/item-exponential", workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)},
		{"client-go/default", workqueue.DefaultTypedControllerRateLimiter[string]()},
	} {
		b.Run(bb.name, func(b *testing.B) {
			bb.rl.When("default/object-1")
			b.ReportAllocs()
			for b.Loop() {
				bb.rl.When("default/object-1")
			}
		})
	}
}
