package retry_test

import (
	"sync"
	"time"
)

// vclock is a virtual clock for tests that run a call on one goroutine:
// After advances the time by d and fires at once, and an operation may call
// Advance to take time itself. Unlike a Mock, it needs no second goroutine
// to step it. It starts at the real time, so that real contexts' deadlines
// are in its future.
type vclock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newVClock() *vclock { return &vclock{now: time.Now()} }

func (c *vclock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *vclock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *vclock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Waits returns the waits asked for so far.
func (c *vclock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}
