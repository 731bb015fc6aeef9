package admit

// Denied tells the guard that a retry it denied ([Guard.Allow]) is about
// to wait its next back-off, and returns the call's [Turn]. The Turn's
// channel is closed when a success lets the retry go early: each success
// the guard records lets the denied retry that has waited longest go, one
// for one, so that retries come back as the dependency serves again,
// without a rush of every retry denied during the trouble. The call then
// asks Allow again, when its turn comes or its back-off ends, whichever
// is first. It calls [Guard.Withdraw] when it stops waiting before its
// turn came. Denied allocates the Turn.
func (g *Guard) Denied() *Turn {
	l := &g.denied
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting.Add(1)
	return l.join()
}

// Withdraw tells the guard that a retry it denied no longer waits for the
// Turn that [Guard.Denied] returned: its back-off ended first, or its call
// ended. A Turn that has come already is left as it is.
func (g *Guard) Withdraw(t *Turn) {
	l := &g.denied
	l.mu.Lock()
	l.remove(t)
	l.mu.Unlock()
}

// letDeniedGo lets the denied retry that has waited longest go, after a
// success.
func (g *Guard) letDeniedGo() {
	l := &g.denied
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) > 0 {
		l.next()
	}
}
