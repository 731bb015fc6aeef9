package backoff

import (
	"math"
	"sync"
	"time"
)

// Keyed keeps one back-off sequence per key, with the semantics of
// client-go's flowcontrol.Backoff as the kubelet uses it for ImagePullBackOff:
// [Keyed.Next] advances a key's delay, [Keyed.InBackoff] says whether the key
// is still waiting, and a key left alone for longer than the idle window
// starts over.
//
// Entries idle past the window are removed as a side effect of the other
// methods (at most one sweep per window), so memory stays bounded by the keys
// seen within about two windows, however many keys come and go; there is no
// GC to remember to call.
//
// Time is passed in: Keyed reads no clock. It is safe for concurrent use. The
// zero value is not usable: call [NewKeyed].
type Keyed[K comparable] struct {
	s    Schedule
	idle time.Duration

	mu      sync.Mutex
	entries map[K]keyedEntry
	swept   time.Time // the last sweep; zero before the first
}

type keyedEntry struct {
	n    int       // position in the schedule, ≥ 1
	last time.Time // the last Next
}

// NewKeyed returns a table that gives each key the delays of s, starting
// over for a key whose last Next is more than idle ago. client-go's
// ImagePullBackOff is NewKeyed[K](Cap(Exponential{10s, 2}, 300s), 600s): the
// idle window is twice the cap. An idle ≤ 0 means keys never start over by
// themselves and are removed only by [Keyed.Reset]. A nil s panics.
func NewKeyed[K comparable](s Schedule, idle time.Duration) *Keyed[K] {
	mustSchedule(s, "NewKeyed")
	return &Keyed[K]{s: s, idle: idle, entries: make(map[K]keyedEntry)}
}

// Next advances key's sequence at time now and returns the delay to wait:
// the first delay for a new key or one idle past the window, the following
// one otherwise.
func (k *Keyed[K]) Next(key K, now time.Time) time.Duration {
	k.mu.Lock()
	k.sweep(now)
	e, ok := k.entries[key]
	if !ok || k.expired(e, now) {
		e.n = 1
	} else if e.n < math.MaxInt {
		e.n++
	}
	e.last = now
	k.entries[key] = e
	k.mu.Unlock()
	return max(k.s.Delay(e.n), 0)
}

// Delay returns key's current delay at time now: the one the last Next
// returned, or 0 for a key with none or one idle past the window.
func (k *Keyed[K]) Delay(key K, now time.Time) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sweep(now)
	e, ok := k.entries[key]
	if !ok || k.expired(e, now) {
		return 0
	}
	return max(k.s.Delay(e.n), 0)
}

// InBackoff reports whether key is still waiting at time now: less than its
// current delay has passed since its last Next.
func (k *Keyed[K]) InBackoff(key K, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sweep(now)
	e, ok := k.entries[key]
	if !ok || k.expired(e, now) {
		return false
	}
	return now.Sub(e.last) < max(k.s.Delay(e.n), 0)
}

// Reset forgets key: its next Next starts over.
func (k *Keyed[K]) Reset(key K) {
	k.mu.Lock()
	delete(k.entries, key)
	k.mu.Unlock()
}

// Len returns the number of keys held, idle ones not yet swept included.
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

func (k *Keyed[K]) expired(e keyedEntry, now time.Time) bool {
	return k.idle > 0 && now.Sub(e.last) > k.idle
}

// sweep removes the idle entries, at most once per idle window, so that its
// cost spreads over the calls of a window. Called with mu held.
func (k *Keyed[K]) sweep(now time.Time) {
	if k.idle <= 0 || now.Sub(k.swept) < k.idle {
		return
	}
	for key, e := range k.entries {
		if k.expired(e, now) {
			delete(k.entries, key)
		}
	}
	k.swept = now
}
