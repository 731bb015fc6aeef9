//go:build go1.25

package retryhttp_test

import (
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/retrytest"
)

// countedClock is a retrytest.Clock that also counts the waits started on
// it, so that a test can check that none was.
type countedClock struct {
	*retrytest.Clock
	waits atomic.Int64
}

func newCountedClock() *countedClock { return &countedClock{Clock: retrytest.NewClock()} }

// After counts the wait, then starts it on the Clock.
func (c *countedClock) After(d time.Duration) <-chan time.Time {
	c.waits.Add(1)
	return c.Clock.After(d)
}

// Waits returns how many times After has been called so far.
func (c *countedClock) Waits() int { return int(c.waits.Load()) }
