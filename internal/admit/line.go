package admit

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A Turn is a call's place in the line of first attempts that a [Guard]
// holds back (see [Guard.Enter]). Its channel is closed when the call's
// first attempt may start. A Turn is used by one call.
type Turn struct {
	C <-chan struct{} // closed when the turn comes
	c chan struct{}
}

// line is a guard's queue of held-back first attempts, first come first
// served. waiting mirrors the queue's length for the lock-free fast path.
type line struct {
	mu      sync.Mutex
	queue   []*Turn
	waiting atomic.Int64
}

// Enter asks for a call's first attempt to start. It returns nil
// when the attempt may start at once. It then counts as running until
// [Guard.Leave]. Otherwise the guard holds it back and returns the call's
// [Turn]. The call waits for the Turn's channel, which closes when an
// attempt that ran ends and leaves room for it, or when the dependency
// answers again. The attempt then counts as running. The call calls
// [Guard.Probe] at once and then a second apart while it waits. It calls
// [Guard.Abandon] if it gives up.
//
// The rule of when first attempts wait, and for how long, is stated in
// the doc of policy.Guard, under "New calls wait their turn".
func (g *Guard) Enter() *Turn {
	if g.line.waiting.Load() == 0 && g.room() {
		g.running.Add(1)
		return nil
	}
	l := &g.line
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting.Add(1) // before the count is read again: a Leave that follows sees the waiter
	if len(l.queue) == 0 && g.room() {
		l.waiting.Add(-1)
		g.running.Add(1)
		return nil
	}
	return l.join() // counted in waiting above
}

// Held reports whether the guard holds new calls back now: a call that
// calls [Guard.Enter] would wait for its turn. A nil *Guard holds nothing
// back.
func (g *Guard) Held() bool {
	return g != nil && (g.line.waiting.Load() > 0 || !g.room())
}

// room reports whether another attempt may start beside those running.
func (g *Guard) room() bool {
	return g.stall.Load() < stallRun || g.running.Load() < stallInFlight
}

// Leave tells the guard that an attempt counted as running has ended: a
// first attempt that [Guard.Enter] let start, or a retry or hedge started
// with [Guard.Run]. The room it leaves goes to the first call waiting.
func (g *Guard) Leave() {
	g.running.Add(-1)
	if g.line.waiting.Load() > 0 {
		g.admitWaiting()
	}
}

// Run tells the guard that a retry or a hedge is starting. It counts as
// running until [Guard.Leave]. Nothing holds it back here: the tokens
// decide ([Guard.Allow], [Guard.AllowHedge]).
func (g *Guard) Run() { g.running.Add(1) }

// Probe is called by a call held back, a second or more apart, at now. It
// reports whether the call's first attempt may start: its turn has come,
// or it goes as the guard's one probe a second, which retries share. Then
// the attempt counts as running. A guard whose room is taken by attempts
// that never end still lets one call a second reach the dependency, so a
// stall never holds calls back for good.
func (g *Guard) Probe(t *Turn, now time.Time) bool {
	l := &g.line
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.index(t)
	switch {
	case i < 0:
		return true // its turn came as it asked
	case !g.probed(now):
		return false
	}
	l.removeAt(i)
	g.running.Add(1)
	return true
}

// Abandon tells the guard that a call held back no longer waits: its
// context ended or its time limit came. If its turn had come already, the
// room goes to the next call waiting.
func (g *Guard) Abandon(t *Turn) {
	l := &g.line
	l.mu.Lock()
	removed := l.remove(t)
	l.mu.Unlock()
	if !removed {
		g.Leave()
	}
}

// remove takes t out of the queue, and reports whether it was there (its
// turn had not come). l.mu is held.
func (l *line) remove(t *Turn) bool {
	i := l.index(t)
	if i >= 0 {
		l.removeAt(i)
	}
	return i >= 0
}

// index returns where t is in the queue, or -1. l.mu is held.
func (l *line) index(t *Turn) int {
	for i, q := range l.queue {
		if q == t {
			return i
		}
	}
	return -1
}

// removeAt takes the i-th call out of the queue. l.mu is held.
func (l *line) removeAt(i int) {
	l.queue = slices.Delete(l.queue, i, i+1)
	l.waiting.Add(-1)
}

// admitWaiting gives the room there is to the calls waiting, first come
// first served.
func (g *Guard) admitWaiting() {
	l := &g.line
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) > 0 && g.room() {
		g.running.Add(1)
		l.next()
	}
}

// join puts a new Turn at the end of l and returns it. The caller has
// counted it in l.waiting already, so that no moment shows it neither
// counted nor queued. Called with l.mu held.
func (l *line) join() *Turn {
	c := make(chan struct{})
	t := &Turn{C: c, c: c}
	l.queue = append(l.queue, t)
	return t
}

// next gives the Turn at the front of l its turn and takes it out of l.
// Called with l.mu held and l not empty.
func (l *line) next() {
	t := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	l.waiting.Add(-1)
	close(t.c)
}

// probed reports whether the probe of this second is due at now, and takes
// it if so.
func (g *Guard) probed(now time.Time) bool {
	next, t := g.probe.Load(), now.UnixNano()
	return t >= next && g.probe.CompareAndSwap(next, t+int64(probeEvery))
}
