package backoff

import (
	"math"
	"sync"
	"time"
)

// Keyed keeps one back-off sequence per key, as client-go's
// flowcontrol.Backoff does for the kubelet's ImagePullBackOff. [Keyed.Next]
// advances a key's delay and returns it. [Keyed.Delay] returns the last
// delay Next gave the key. It is not the time left to wait. A key left
// alone for longer than the idle window goes back to the first delay.
//
// The zero Keyed is ready to use. It follows the kubelet schedule, 10s
// doubling to a cap of 300s, with an idle window of 600s, twice the cap, as
// ImagePullBackOff does. [NewKeyed] makes a table with another schedule or
// window. A Keyed is safe for concurrent use, and must not be copied after
// first use. It reads no clock: each method takes the time as an argument.
//
// Keyed forgets idle keys by itself, with no sweep and no GC method to call.
// It keeps its keys in two generations: the one being filled and the one
// before it. Once every key of the older generation is idle, the table drops
// that generation whole, and its memory returns to the runtime. So the table
// holds the keys used within about the last two idle windows, and every call
// costs about the same however many keys it holds. [NewKeyed] tells how a
// table with no idle window differs.
//
// The times given to one table should lie within about 290 years of one
// another. A time further than that from the first time the table saw starts
// the table afresh, with no keys.
type Keyed[K comparable] struct {
	s    Schedule      // nil: the kubelet schedule
	idle time.Duration // 0: twice the kubelet cap; < 0: never idle

	mu      sync.Mutex
	started bool
	epoch   time.Time     // times are kept as offsets from this one
	began   time.Duration // when cur's generation began
	cur     map[K]keyedEntry
	old     map[K]keyedEntry // the previous generation; no key is in both
	curLast time.Duration    // no key in cur has a later last Next
	oldLast time.Duration    // nor in old
	curPeak int              // the most keys cur has held: Forget moves what is left to a smaller map
	oldPeak int              // the most keys old held while it was cur: a map's memory is sized by it
}

// keyedShrinkFloor is the fewest keys a map must have held before Forget
// moves its keys to a smaller one: below it, the memory is not worth a copy.
const keyedShrinkFloor = 1024

type keyedEntry struct {
	n    int           // position in the schedule, ≥ 1
	last time.Duration // the last Next, as an offset from epoch
}

// NewKeyed returns a table that gives each key the delays of s. A key whose
// last Next is more than idle ago starts over at the first delay.
// NewKeyed[string](kubelet, 600*time.Second), with kubelet the schedule
// Cap(Exponential(10*time.Second, 2), 300*time.Second), behaves as the zero
// Keyed does, and as client-go's ImagePullBackOff: its idle window is twice
// the cap.
//
// An idle ≤ 0 means that keys never start over by themselves. Only
// [Keyed.Forget] removes them, and the table's memory follows the keys it
// holds. Go maps never shrink, so once Forget has removed three quarters of
// the most keys the table held, it moves the keys left to a map of their
// size. That copy takes at most a quarter of the peak, so Forget costs
// constant time on average, though not on every call.
//
// A nil s panics here, and so does an s that holds a nil function or
// pointer.
func NewKeyed[K comparable](s Schedule, idle time.Duration) *Keyed[K] {
	mustSchedule(s, "NewKeyed")
	if idle <= 0 {
		idle = -1 // the zero idle is the zero Keyed's window
	}
	return &Keyed[K]{s: s, idle: idle}
}

// Next advances key's sequence at time now and returns the delay to wait. A
// new key, a forgotten one or one idle past the window gets the first delay.
// Any other key gets the next delay of its sequence.
//
// A table whose schedule is the identity, n ↦ time.Duration(n), makes Next
// return the key's position itself: 1 for a new key, one more for each
// Next since. That is the way to draw a delay of one's own for the
// position, for example a jittered one, with the position read and
// advanced as one step.
func (k *Keyed[K]) Next(key K, now time.Time) time.Duration {
	k.mu.Lock()
	t := k.turn(now)
	e, ok := k.cur[key]
	if !ok {
		if e, ok = k.old[key]; ok {
			delete(k.old, key)
			if len(k.old) == 0 {
				k.old = nil // drained: its memory need not wait for the window
			}
		}
		if k.cur == nil {
			k.cur = make(map[K]keyedEntry)
		}
	}
	if !ok || k.expired(e, t) {
		e.n = 1
	} else if e.n < math.MaxInt {
		e.n++
	}
	e.last = t
	k.cur[key] = e
	k.curLast = max(k.curLast, t)
	k.curPeak = max(k.curPeak, len(k.cur))
	k.mu.Unlock()
	return k.delay(e.n)
}

// Count returns key's position at time now: how many times Next has
// advanced its sequence since it started over. It is 0 for a key with
// none, a forgotten one or one idle past the window.
func (k *Keyed[K]) Count(key K, now time.Time) int {
	k.mu.Lock()
	e, _, ok := k.get(key, now)
	k.mu.Unlock()
	if !ok {
		return 0
	}
	return e.n
}

// Delay returns key's current delay at time now: the one the last Next
// returned. It is 0 for a key with none, a forgotten one or one idle past
// the window.
func (k *Keyed[K]) Delay(key K, now time.Time) time.Duration {
	k.mu.Lock()
	e, _, ok := k.get(key, now)
	k.mu.Unlock()
	if !ok {
		return 0
	}
	return k.delay(e.n)
}

// Forget forgets key: its next Next starts over, as for a key never seen.
// Once every key has been forgotten, the table holds no map at all.
func (k *Keyed[K]) Forget(key K) {
	k.mu.Lock()
	delete(k.cur, key)
	delete(k.old, key)
	if len(k.old) == 0 {
		k.old = nil
	}
	// Go maps never shrink: a drained map is let go of at once, and once
	// Forget has removed three quarters of the most keys cur held, the rest
	// move to a map of their size. Each move copies at most a third of the
	// deletes since the last one.
	if len(k.cur) == 0 {
		k.cur, k.curPeak = nil, 0
	} else if n := len(k.cur); n < k.curPeak/4 && k.curPeak >= keyedShrinkFloor {
		cur := make(map[K]keyedEntry, n)
		for key, e := range k.cur {
			cur[key] = e
		}
		k.cur, k.curPeak = cur, n
	}
	k.mu.Unlock()
}

// Len returns the number of keys held, idle ones not yet let go of included.
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.cur) + len(k.old)
}

// get returns key's entry at time now, if it has one that is not idle, and
// now as an offset. Called with mu held.
func (k *Keyed[K]) get(key K, now time.Time) (keyedEntry, time.Duration, bool) {
	t := k.turn(now)
	e, ok := k.cur[key]
	if !ok {
		e, ok = k.old[key]
	}
	return e, t, ok && !k.expired(e, t)
}

func (k *Keyed[K]) delay(n int) time.Duration {
	if k.s == nil {
		return kubelet().Delay(n)
	}
	return max(k.s.Delay(n), 0)
}

func (k *Keyed[K]) window() time.Duration {
	if k.idle == 0 {
		return 2 * kubeletCap
	}
	return k.idle
}

func (k *Keyed[K]) expired(e keyedEntry, t time.Duration) bool {
	idle := k.window()
	return idle > 0 && subSat(t, e.last) > idle
}

// at returns now as an offset from the epoch, the first time the table saw.
// A time too far from the epoch for an offset starts the table afresh with
// it as the epoch. Called with mu held.
func (k *Keyed[K]) at(now time.Time) time.Duration {
	if k.started {
		if t := now.Sub(k.epoch); t != math.MinInt64 && t != math.MaxInt64 {
			return t
		}
	}
	k.started, k.epoch, k.began = true, now, 0
	k.cur, k.old, k.curLast, k.oldLast, k.curPeak, k.oldPeak = nil, nil, 0, 0, 0, 0
	return 0
}

// turn lets go of the old generation once all its keys are idle, and starts
// a new generation when the current one has lasted a window, and returns now
// as an offset. It never looks at a key: its cost does not depend on the
// table's size. Called with mu held.
func (k *Keyed[K]) turn(now time.Time) time.Duration {
	t := k.at(now)
	idle := k.window()
	if idle <= 0 {
		return t
	}
	if k.old != nil && subSat(t, k.oldLast) > idle {
		k.old = nil
	}
	if k.old == nil && subSat(t, k.began) >= idle {
		k.old, k.oldLast, k.oldPeak = k.cur, k.curLast, k.curPeak
		k.cur, k.curLast, k.curPeak, k.began = nil, math.MinInt64, 0, t
		if subSat(t, k.oldLast) > idle {
			k.old = nil
		}
	}
	return t
}

// subSat returns a-b, saturated to the range of time.Duration.
func subSat(a, b time.Duration) time.Duration {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}
