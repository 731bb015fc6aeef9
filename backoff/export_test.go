package backoff

import "time"

// Kubelet is the kubelet schedule, for the tests.
func Kubelet() Schedule { return kubelet() }

// InBackoff reports whether key is still waiting at time now, that is,
// whether less than its current delay has passed since its last Next.
func (k *Keyed[K]) InBackoff(key K, now time.Time) bool {
	k.mu.Lock()
	e, t, ok := k.get(key, now)
	k.mu.Unlock()
	return ok && subSat(t, e.last) < k.delay(e.n)
}

// KeyedSlots returns the entries the maps k still holds are sized for: for
// each, the most keys it has held, since a Go map never shrinks. The
// table's own memory is that many entries' worth, whatever else the process
// allocates meanwhile.
func KeyedSlots[K comparable](k *Keyed[K]) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	if k.cur != nil {
		n += k.curPeak
	}
	if k.old != nil {
		n += k.oldPeak
	}
	return n
}
