//go:build go1.25

package backoff_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

// burstKeys is how many keys the memory and latency tests pass through a
// table: a million, as in a kubelet's worst day, or fewer where the run
// would be slow.
func burstKeys() int {
	if testing.Short() || raceEnabled {
		return 200_000
	}
	return 1_000_000
}

// heapInUse returns the bytes of live heap objects, after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// After a burst of keys that then go idle, the table's memory returns: the
// maps it still holds are sized for the one key that stays in use. The
// count is the table's own, whatever else the process allocates.
func TestKeyedMemoryComesBackAfterABurst(t *testing.T) {
	keys := burstKeys()
	k := imagePull()
	now := t0
	for i := range keys {
		k.Next("burst-"+strconv.Itoa(i), now)
		now = now.Add(time.Microsecond)
	}
	require.Equal(t, keys, backoff.KeyedSlots(k), "the burst is held, or this test shows nothing")

	// One key stays busy for 25 minutes: the burst's generation is let go of
	// once it holds no key used within the last window.
	for range 150 {
		k.Next("live", now)
		now = now.Add(10 * time.Second)
	}
	require.Equal(t, 1, k.Len())
	require.Equal(t, 1, backoff.KeyedSlots(k), "the maps held once the burst is idle, in entries")
}

// The table's own memory is at most 100 bytes per resident key when it
// grows to a million string keys. The keys' bytes are the caller's, made
// before the count.
func TestKeyedAllocBytesPerKey(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a million keys; run without -short and -race")
	}
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	perKey := tableBytesPerKey(keys)
	t.Logf("%.1f B/key at %d keys", perKey, n)
	require.LessOrEqual(t, perKey, 100.0)
}

// tableBytesPerKey fills a table with keys, all resident, and returns the
// heap it holds per key.
func tableBytesPerKey(keys []string) float64 {
	before := heapInUse()
	k := imagePull()
	now := t0
	for _, key := range keys {
		k.Next(key, now)
		now = now.Add(time.Microsecond)
	}
	after := heapInUse()
	runtime.KeepAlive(k)
	runtime.KeepAlive(keys)
	return float64(int64(after)-int64(before)) / float64(len(keys))
}

// No call stalls the table, however many keys it holds: the call that
// follows a burst of keys gone idle lets the whole burst go at once, by
// dropping its generation, without looking at a key. So the table holds no
// entry of the burst after that one call, and the calls after it cost what
// they cost in a small table. BenchmarkKeyedAfterIdleBurst times them.
func TestKeyedLetsAnIdleBurstGoInOneCall(t *testing.T) {
	k := imagePull()
	now := t0
	const keys = 100_000
	for i := range keys {
		k.Next("burst-"+strconv.Itoa(i), now)
		now = now.Add(time.Microsecond)
	}
	require.GreaterOrEqual(t, backoff.KeyedSlots(k), keys, "the burst is held")
	now = now.Add(601 * time.Second) // every key of the burst is idle
	require.Zero(t, k.Count("first", now), "a key never seen")
	require.Zero(t, backoff.KeyedSlots(k), "one call let go of the whole burst")
	require.Equal(t, 10*time.Second, k.Next("burst-7", now), "an idle key starts over")
}

// BenchmarkKeyedAfterIdleBurst times the calls that follow a burst of a
// million keys gone idle, the first of which lets the burst go; it reports
// the longest of them too.
func BenchmarkKeyedAfterIdleBurst(b *testing.B) {
	var first, longest time.Duration
	for b.Loop() {
		first, longest = idleBurstLatency(burstKeys())
	}
	b.ReportMetric(float64(first.Nanoseconds()), "first-ns")
	b.ReportMetric(float64(longest.Nanoseconds()), "longest-ns")
}

// idleBurstLatency passes keys keys through a table, lets them all go idle,
// and times the calls that follow: the first, and the longest of 20,000.
func idleBurstLatency(keys int) (first, longest time.Duration) {
	k := imagePull()
	now := t0
	for i := range keys {
		k.Next("burst-"+strconv.Itoa(i), now)
		now = now.Add(time.Microsecond)
	}
	now = now.Add(601 * time.Second) // every key of the burst is idle
	start := time.Now()
	k.InBackoff("first", now) // lets go of the burst
	first = time.Since(start)
	longest = first
	for i := range 20_000 {
		key := "after-" + strconv.Itoa(i)
		start := time.Now()
		switch i % 3 {
		case 0:
			k.Next(key, now)
		case 1:
			k.InBackoff(key, now)
		default:
			k.Delay("burst-"+strconv.Itoa(i), now)
		}
		longest = max(longest, time.Since(start))
		now = now.Add(time.Millisecond)
	}
	return first, longest
}

// BenchmarkKeyedGrow fills a table with a million string keys and reports
// the heap it holds per resident key (the keys' own bytes, made beforehand,
// excluded). Its time per op includes two collections.
func BenchmarkKeyedGrow(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	var perKey float64
	b.ReportAllocs()
	for b.Loop() {
		perKey = tableBytesPerKey(keys)
	}
	b.ReportMetric(perKey, "B/key")
}

// A key already in the table advances without allocating.
func TestKeyedNextAllocs(t *testing.T) {
	var k backoff.Keyed[string]
	now := t0
	k.Next("img", now)
	require.Zero(t, testing.AllocsPerRun(100, func() {
		now = now.Add(time.Second)
		k.Next("img", now)
		k.InBackoff("img", now)
		k.Delay("img", now)
	}))
}

// BenchmarkKeyedSteady keeps a million string keys resident, each used every
// 300s (half the idle window), for two windows, and reports the heap the
// table holds per key, sampled every 100,000 calls after the first round:
// on average and at its peak, while keys move from one generation to the
// next.
func BenchmarkKeyedSteady(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	var mean, peak float64
	for b.Loop() {
		before := heapInUse()
		k := imagePull()
		now := t0
		var sum, most uint64
		samples := 0
		for i := range 4 * n {
			k.Next(keys[i%n], now)
			now = now.Add(300 * time.Microsecond)
			if i >= n && i%(n/10) == 0 {
				h := heapInUse() - before
				most = max(most, h)
				sum += h
				samples++
			}
		}
		mean = float64(sum) / float64(samples) / n
		peak = float64(most) / n
		runtime.KeepAlive(k)
	}
	b.ReportMetric(mean, "B/key")
	b.ReportMetric(peak, "peak-B/key")
}

// A table with no idle window gives its memory back as Forget removes keys:
// after a burst that is then forgotten, its map is sized for fewer keys than
// the floor below which Forget copies nothing, and the keys left keep their
// sequences.
func TestKeyedWithoutIdleWindowShrinksOnForget(t *testing.T) {
	keys := burstKeys()
	k := backoff.NewKeyed[string](backoff.Kubelet(), 0)
	for i := range keys {
		k.Next("burst-"+strconv.Itoa(i), t0)
	}
	k.Next("burst-0", t0) // 20s next time
	require.Equal(t, keys, backoff.KeyedSlots(k), "the burst is held, or this test shows nothing")
	for i := 1; i < keys; i++ {
		k.Forget("burst-" + strconv.Itoa(i))
	}
	require.Equal(t, 1, k.Len())
	slots := backoff.KeyedSlots(k)
	t.Logf("the map is sized for %d entries once %d keys are forgotten but one", slots, keys)
	require.Less(t, slots, 1024, "the map held once the burst is forgotten, in entries")
	require.Equal(t, 40*time.Second, k.Next("burst-0", t0.Add(time.Hour)), "the key left keeps its place")
	require.Equal(t, 10*time.Second, k.Next("burst-1", t0.Add(time.Hour)), "a forgotten key starts over")
}
