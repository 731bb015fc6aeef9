// Package clocktest holds what this repository's tests share about clocks.
package clocktest

import (
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/retrytest"
)

// Counted is a retrytest.Clock that also counts the waits started on it,
// so that a test can check that none was. It is safe for concurrent use.
type Counted struct {
	*retrytest.Clock
	waits atomic.Int64
}

// NewCounted returns a Counted clock at retrytest.NewClock's time.
func NewCounted() *Counted { return &Counted{Clock: retrytest.NewClock()} }

// After counts the wait, then starts it on the Clock.
func (c *Counted) After(d time.Duration) <-chan time.Time {
	c.waits.Add(1)
	return c.Clock.After(d)
}

// Waits returns how many times After has been called so far.
func (c *Counted) Waits() int { return int(c.waits.Load()) }
