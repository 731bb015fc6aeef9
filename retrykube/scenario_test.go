package retrykube_test

import (
	"runtime"
	"slices"
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

// A scenario: a controller with a real client-go workqueue and 4 workers
// holds objects that fail to reconcile together for the outage (their
// dependency is down) and then succeed; a reconcile takes 1 ms. It runs
// inside testing/synctest, on virtual time.
type scenario struct {
	objects int
	outage  time.Duration
}

// long is the scenario of the table in docs/kubernetes.md: 1,000 objects through a 30 s
// outage. short is a blip: 100 objects through a 5 s outage.
var (
	long  = scenario{objects: 1000, outage: 30 * time.Second}
	short = scenario{objects: 100, outage: 5 * time.Second}
)

const (
	workers   = 4
	reconcile = time.Millisecond
	horizon   = 600 // seconds of per-second counts kept
)

// outcome is what the scenario measures.
type outcome struct {
	duringOutage int           // reconciles started during the outage, the first ones included
	busiest      int           // the most reconciles started in one second after recovery
	allDone      time.Duration // from recovery until every object has reconciled successfully
	median       time.Duration // … until half of them have
	startBytes   int64         // the limiter's heap, in bytes, once built, for the table in docs/kubernetes.md
	endBytes     int64         // … once every object has reconciled and the queue is gone
	items        int           // the items a retrykube limiter keeps state for at the end; -1 for another
}

// newLimiter builds the limiter of a scenario's row, rl, and returns with
// it own, the retrykube limiter inside rl, or nil when it has none.
type newLimiter func() (rl, own workqueue.TypedRateLimiter[string])

// alone is the newLimiter of a limiter on its own.
func alone(f func() workqueue.TypedRateLimiter[string], ours bool) newLimiter {
	return func() (workqueue.TypedRateLimiter[string], workqueue.TypedRateLimiter[string]) {
		rl := f()
		if ours {
			return rl, rl
		}
		return rl, nil
	}
}

// runScenario runs sc with the limiter newLimiter builds, inside a synctest
// bubble.
func runScenario(t *testing.T, sc scenario, build newLimiter) outcome {
	t.Helper()
	objects, outage := sc.objects, sc.outage
	var out outcome
	synctest.Test(t, func(t *testing.T) {
		keys := make([]string, objects)
		for i := range keys {
			keys[i] = "default/object-" + strconv.Itoa(i)
		}
		var (
			perSecond [horizon]int
			doneAt    = make([]time.Duration, 0, objects)
			mu        sync.Mutex
		)
		out.startBytes = limiterBytes(build)
		limiter, own := build()

		start := time.Now()
		q := workqueue.NewTypedRateLimitingQueue(limiter)
		for _, k := range keys {
			q.Add(k)
		}
		allDone := make(chan struct{})
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					key, shutdown := q.Get()
					if shutdown {
						return
					}
					at := time.Since(start)
					time.Sleep(reconcile)
					mu.Lock()
					if s := int(at / time.Second); s < horizon {
						perSecond[s]++
					}
					if at < outage {
						out.duringOutage++
						mu.Unlock()
						q.AddRateLimited(key)
					} else {
						doneAt = append(doneAt, at-outage)
						if len(doneAt) == objects {
							close(allDone)
						}
						mu.Unlock()
						q.Forget(key)
					}
					q.Done(key)
				}
			})
		}
		<-allDone
		q.ShutDown()
		wg.Wait()
		q = nil

		out.items = -1
		if own != nil {
			out.items = retrykube.Items(own)
		}
		out.busiest = slices.Max(perSecond[outage/time.Second:])
		slices.Sort(doneAt)
		out.allDone, out.median = doneAt[objects-1], doneAt[objects/2-1]
		with := heapInUse()
		runtime.KeepAlive(limiter)
		limiter, own = nil, nil
		out.endBytes = with - heapInUse()
	})
	return out
}

// limiterBytes returns the heap, in bytes, that a limiter build builds
// holds, for the table in docs/kubernetes.md.
func limiterBytes(build newLimiter) int64 {
	build() // a first one may set up global state that stays
	l, _ := build()
	with := heapInUse()
	runtime.KeepAlive(l)
	return with - heapInUse()
}

// heapInUse returns the bytes of live heap objects, after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC() // the first may leave the previous run's garbage half swept
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// fullJitter is the policy of the goals: client-go's item schedule
// (5 ms doubling to 1,000 s) with full jitter.
func fullJitter() policy.Policy {
	return policy.Exponential(5 * time.Millisecond).WithCap(1000 * time.Second).
		WithJitter(backoff.Jitter{Kind: backoff.Full})
}

// goals are the scenario's goals, each checked against the default's row.
type goals struct{ outage, busiest, allDone, memory bool }

var scenarioRows = []struct {
	name  string
	new   newLimiter
	meets goals // which goals the row is expected to meet
}{
	{"`DefaultTypedControllerRateLimiter` (item exponential + 10 qps bucket)", alone(workqueue.DefaultTypedControllerRateLimiter[string], false), goals{outage: true, busiest: true}},
	{"item exponential alone (5 ms → 1,000 s, no jitter)", alone(func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
	}, false), goals{allDone: true}},
	{"`NewRateLimiter`, same schedule, no jitter, no guard", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](policy.Exponential(5 * time.Millisecond).WithCap(1000 * time.Second).WithGuard(admission.Off))
	}, true), goals{allDone: true, memory: true}},
	{"`NewRateLimiter`, `policy.Default()` (10 s → 300 s, no jitter), no guard", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](policy.Default().WithGuard(admission.Off))
	}, true), goals{allDone: true, memory: true}},
	{"`NewRateLimiter`, 5 ms → 1,000 s, full jitter, no guard", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](fullJitter().WithGuard(admission.Off))
	}, true), goals{busiest: true, memory: true}},
	{"`NewRateLimiter`, full jitter, no guard, max of a 10 qps bucket", func() (workqueue.TypedRateLimiter[string], workqueue.TypedRateLimiter[string]) {
		own := retrykube.NewRateLimiter[string](fullJitter().WithGuard(admission.Off))
		return workqueue.NewTypedMaxOfRateLimiter(own, &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 100)}), own
	}, goals{outage: true, busiest: true, memory: true}},
	{"`NewRateLimiter`, `policy.Default()`, its own guard", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](policy.Default())
	}, true), goals{outage: true, busiest: true, allDone: true, memory: true}},
	{"`NewRateLimiter`, full jitter, its own guard (the default)", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](fullJitter())
	}, true), goals{outage: true, busiest: true, allDone: true, memory: true}},
	{"`NewRateLimiter`, full jitter, `policy.NewGuard(50, 1)` in the policy", alone(func() workqueue.TypedRateLimiter[string] {
		return retrykube.NewRateLimiter[string](fullJitter().WithGuard(policy.NewGuard(50, 1)))
	}, true), goals{outage: true, busiest: true, allDone: true, memory: true}},
	{"`NewRateLimiter`, full jitter, its own guard, max of a 10 qps bucket", func() (workqueue.TypedRateLimiter[string], workqueue.TypedRateLimiter[string]) {
		own := retrykube.NewRateLimiter[string](fullJitter())
		return workqueue.NewTypedMaxOfRateLimiter(own, &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 100)}), own
	}, goals{outage: true, busiest: true, memory: true}},
}

// TestScenario runs every row, prints the table in docs/kubernetes.md, and checks each
// goal of each row against what the row is expected to meet: a row that
// starts meeting a goal, or stops, fails the test.
func TestScenario(t *testing.T) {
	base := runScenario(t, long, scenarioRows[0].new)
	t.Log("| limiter | reconciles during the 30 s outage | busiest second after recovery | every object reconciled, after recovery | limiter's heap after, start |")
	for _, r := range scenarioRows {
		o := runScenario(t, long, r.new)
		t.Logf("| %s | %d (%.1f/s) | %d | %.1f s (p50 %.1f s) | %d B, %d B |", r.name, o.duringOutage,
			float64(o.duringOutage)/long.outage.Seconds(), o.busiest, o.allDone.Seconds(), o.median.Seconds(), o.endBytes, o.startBytes)
		got := goals{
			outage:  o.duringOutage <= base.duringOutage,
			busiest: o.busiest <= long.objects/10,
			allDone: o.allDone <= 50*time.Second,
			memory:  o.items == 0, // back to its starting size: see retrykube.Items
		}
		require.Equal(t, r.meets, got, "%s: goals met (want, got): reconciles during the outage %d (default %d), busiest second %d (at most %d), every object after %v (at most 50s), items held at the end %d (-1: not a retrykube limiter)",
			r.name, o.duringOutage, base.duringOutage, o.busiest, long.objects/10, o.allDone, o.items)
	}
}

// TestScenarioBlip: after a blip (100 objects through a 5 s outage), a
// guarded limiter, its own or one named, has every object reconciled no
// later than client-go's default does. A denied requeue of a blip waits 2.5
// to 5 s, not the half minute to a minute that sits out an outage of many
// objects (it once waited that long here: 55 s after recovery).
func TestScenarioBlip(t *testing.T) {
	base := runScenario(t, short, alone(workqueue.DefaultTypedControllerRateLimiter[string], false))
	t.Logf("client-go's default: every object reconciled %.1f s after recovery", base.allDone.Seconds())
	for _, r := range []struct {
		name string
		new  func() workqueue.TypedRateLimiter[string]
	}{
		{"its own guard", func() workqueue.TypedRateLimiter[string] { return retrykube.NewRateLimiter[string](fullJitter()) }},
		{"a guard in the policy", func() workqueue.TypedRateLimiter[string] {
			return retrykube.NewRateLimiter[string](fullJitter().WithGuard(policy.NewGuard(50, 1)))
		}},
	} {
		o := runScenario(t, short, alone(r.new, true))
		t.Logf("%s: %d reconciles during the outage, every object reconciled %.1f s after recovery", r.name, o.duringOutage, o.allDone.Seconds())
		require.LessOrEqual(t, o.allDone, base.allDone, "%s: every object reconciled after recovery", r.name)
	}
}
