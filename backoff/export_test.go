package backoff

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
