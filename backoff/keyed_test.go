//go:build go1.25

package backoff_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
)

// imagePull is client-go's ImagePullBackOff: 10s ×2 capped at 300s, reset
// after 2 × 300s idle.
func imagePull() *backoff.Keyed[string] {
	return backoff.NewKeyed[string](backoff.Kubelet(), 600*time.Second)
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestKeyedImagePullSequence(t *testing.T) {
	k := imagePull()
	now := t0
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300, 300}
	for i, w := range want {
		d := k.Next("nginx", now)
		require.Equal(t, w*time.Second, d, "pull failure %d", i+1)
		require.True(t, k.InBackoff("nginx", now), "right after a failure")
		require.True(t, k.InBackoff("nginx", now.Add(d-1)), "just before the delay ends")
		require.False(t, k.InBackoff("nginx", now.Add(d)), "once the delay has passed")
		require.Equal(t, d, k.Delay("nginx", now.Add(d)))
		now = now.Add(d)
	}
}

func TestKeyedKeysAreIndependent(t *testing.T) {
	k := imagePull()
	require.Equal(t, 10*time.Second, k.Next("a", t0))
	require.Equal(t, 20*time.Second, k.Next("a", t0.Add(10*time.Second)))
	require.Equal(t, 10*time.Second, k.Next("b", t0.Add(10*time.Second)))
	require.Equal(t, 40*time.Second, k.Next("a", t0.Add(30*time.Second)))
	require.False(t, k.InBackoff("c", t0))
	require.Zero(t, k.Delay("c", t0))
	k.Forget("a")
	require.Equal(t, 10*time.Second, k.Next("a", t0.Add(70*time.Second)))
	require.Equal(t, 20*time.Second, k.Next("b", t0.Add(70*time.Second)))
}

func TestKeyedStartsOverAfterTheIdleWindow(t *testing.T) {
	k := imagePull()
	now := t0
	for range 7 {
		now = now.Add(k.Next("img", now))
	}
	last := now.Add(-300 * time.Second) // the time of the last Next
	require.Equal(t, 300*time.Second, k.Delay("img", last.Add(600*time.Second)), "exactly the window: not idle yet")
	require.Zero(t, k.Delay("img", last.Add(600*time.Second+1)), "past the window the entry is gone")
	require.False(t, k.InBackoff("img", last.Add(601*time.Second)))
	require.Equal(t, 10*time.Second, k.Next("img", last.Add(601*time.Second)))
}

func TestKeyedMemoryStaysBounded(t *testing.T) {
	keys := 1_000_000
	if testing.Short() || raceEnabled { // the bound shows as well, ten times faster under -race
		keys = 100_000
	}
	// One new key every second: with a 600s idle window, only the keys of
	// about the last two windows may stay resident.
	k := backoff.NewKeyed[int](backoff.Kubelet(), 600*time.Second)
	now := t0
	peak := 0
	for i := range keys {
		k.Next(i, now)
		peak = max(peak, k.Len())
		now = now.Add(time.Second)
	}
	require.LessOrEqual(t, peak, 1202, "peak resident keys")
	require.LessOrEqual(t, k.Len(), 1202, "resident keys at the end")
}

func TestKeyedConcurrentUse(t *testing.T) {
	k := imagePull()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				now := t0.Add(time.Duration(i) * time.Second)
				k.Next(strconv.Itoa(g*1000+i%10), now)
				k.InBackoff(strconv.Itoa(g*1000+i%10), now)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, k.Len(), 80)
}

// The zero Keyed is client-go's ImagePullBackOff: the kubelet schedule and
// an idle window of twice its cap.
func TestKeyedZeroValue(t *testing.T) {
	var k backoff.Keyed[string]
	require.Zero(t, k.Len())
	require.False(t, k.InBackoff("img", t0))
	require.Zero(t, k.Delay("img", t0))
	now := t0
	for i, w := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		d := k.Next("img", now)
		require.Equal(t, w*time.Second, d, "pull failure %d", i+1)
		require.True(t, k.InBackoff("img", now.Add(d-1)))
		require.False(t, k.InBackoff("img", now.Add(d)))
		now = now.Add(d)
	}
	last := now.Add(-300 * time.Second)
	require.Equal(t, 300*time.Second, k.Delay("img", last.Add(600*time.Second)), "at the window: not idle yet")
	require.Zero(t, k.Delay("img", last.Add(600*time.Second+1)), "past the window: idle")
	require.Equal(t, 10*time.Second, k.Next("img", last.Add(601*time.Second)))
	k.Forget("img")
	require.Zero(t, k.Len())
	require.Equal(t, 10*time.Second, k.Next("img", last.Add(602*time.Second)))
}

// With no idle window a key keeps its place however long it waits.
func TestKeyedWithoutIdleWindow(t *testing.T) {
	for _, idle := range []time.Duration{0, -time.Second} {
		k := backoff.NewKeyed[string](backoff.Kubelet(), idle)
		require.Equal(t, 10*time.Second, k.Next("a", t0))
		require.Equal(t, 20*time.Second, k.Next("a", t0.Add(100*365*24*time.Hour)))
		require.Equal(t, 20*time.Second, k.Delay("a", t0.Add(200*365*24*time.Hour)))
		require.Equal(t, 1, k.Len())
	}
}

// A key used in one generation and again in the next keeps its sequence, and
// one that moved on is not counted twice.
func TestKeyedKeyCrossesGenerations(t *testing.T) {
	k := imagePull()
	now := t0
	for i, w := range []time.Duration{10, 20, 40, 80, 160, 300, 300, 300, 300, 300} {
		require.Equal(t, w*time.Second, k.Next("a", now), "Next #%d at %v", i+1, now.Sub(t0))
		k.Next("b", now)
		require.Equal(t, 2, k.Len())
		now = now.Add(500 * time.Second) // within the window, across generations
	}
	k.Forget("a")
	require.Equal(t, 1, k.Len())
	require.Equal(t, 10*time.Second, k.Next("a", now))
}

// Times more than about 290 years apart cannot be compared as offsets: the
// table starts afresh rather than misjudge which keys are idle.
func TestKeyedFarApartTimesStartAfresh(t *testing.T) {
	k := imagePull()
	require.Equal(t, 10*time.Second, k.Next("a", time.Time{}))
	require.Equal(t, 20*time.Second, k.Next("a", time.Time{}.Add(time.Second)))
	require.Equal(t, 10*time.Second, k.Next("a", t0), "two thousand years later")
	require.Equal(t, 1, k.Len())
	require.True(t, k.InBackoff("a", t0.Add(time.Second)))
}

func BenchmarkKeyedNext(b *testing.B) {
	k := backoff.NewKeyed[int](backoff.Kubelet(), 600*time.Second)
	now := t0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k.Next(i%1024, now)
		i++
		now = now.Add(time.Millisecond)
	}
}

// Count reads a key's position without moving it, and starts over as Next
// does.
func TestKeyedCount(t *testing.T) {
	k := imagePull()
	require.Zero(t, k.Count("a", t0), "a key never seen")
	require.Equal(t, 10*time.Second, k.Next("a", t0))
	require.Equal(t, 1, k.Count("a", t0))
	require.Equal(t, 20*time.Second, k.Next("a", t0))
	require.Equal(t, 40*time.Second, k.Next("a", t0))
	require.Equal(t, 3, k.Count("a", t0))
	require.Equal(t, 3, k.Count("a", t0.Add(600*time.Second)), "at the window: not idle yet")
	require.Zero(t, k.Count("a", t0.Add(600*time.Second+1)), "past the window: idle")
	require.Equal(t, 10*time.Second, k.Next("a", t0.Add(601*time.Second)), "idle: starts over")
	require.Equal(t, 1, k.Count("a", t0.Add(601*time.Second)))
	k.Forget("a")
	require.Zero(t, k.Count("a", t0.Add(601*time.Second)), "forgotten")
}

// A table whose schedule is the identity gives positions: Next returns the
// key's position as it advances it, as its doc says.
func TestKeyedPositions(t *testing.T) {
	identity := backoff.ScheduleFunc(func(n int) time.Duration { return time.Duration(n) })
	k := backoff.NewKeyed[string](identity, 600*time.Second)
	require.Equal(t, time.Duration(1), k.Next("a", t0))
	require.Equal(t, time.Duration(2), k.Next("a", t0))
	require.Equal(t, time.Duration(1), k.Next("b", t0), "each key its own")
	require.Equal(t, time.Duration(3), k.Next("a", t0.Add(600*time.Second)))
	require.Equal(t, 3, k.Count("a", t0.Add(600*time.Second)))
	require.Equal(t, time.Duration(1), k.Next("a", t0.Add(1201*time.Second)), "idle: starts over")
}

// Once every key is forgotten the table lets go of its map, however few
// keys it held: it holds no map at all, as an empty table.
func TestKeyedForgetAllGivesMemoryBack(t *testing.T) {
	k := backoff.NewKeyed[string](backoff.Kubelet(), 0)
	for i := range 1000 { // below the size at which Forget copies
		k.Next("object-"+strconv.Itoa(i), t0)
	}
	require.Equal(t, 1000, backoff.KeyedSlots(k), "the keys are held, or this test shows nothing")
	for i := range 1000 {
		k.Forget("object-" + strconv.Itoa(i))
	}
	require.Zero(t, backoff.KeyedSlots(k), "entries held once every key is forgotten")
}
