package retrytest

import (
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// defaultPatience is a new Clock's Patience.
const defaultPatience = 10 * time.Second

// Clock is a mock clock whose After also records the delay asked for and
// signals the test. It embeds github.com/benbjohnson/clock's Mock, so Add,
// Set, WithTimeout and the rest are there. It satisfies policy.Clock.
//
// Only After signals. Timer, Ticker, Sleep, AfterFunc and WithTimeout are
// the Mock's own, and do not. So a policy's attempt timeout, which runs on
// WithTimeout, starts no wait that Step sees: the test ends it with Add. A
// Clock is safe for concurrent use, except that only one goroutine at a time
// may advance it with Add, Set or Step: two Adds at once can move the Mock's
// time backwards. NextWait and Step fail the test through tb, so call them
// from the goroutine that runs the test. The zero Clock is not usable: call
// [NewClock].
type Clock struct {
	*clock.Mock

	// Patience is how long, in real time, NextWait waits for the code
	// under test to start a wait before it fails the test: 10s in a Clock
	// from NewClock. Set it before use.
	Patience time.Duration

	mu      sync.Mutex
	pending []time.Duration // delays asked for and not yet taken by NextWait
	waits   int             // every After call so far
	signal  chan struct{}   // holds a token while pending is not empty
}

// NewClock returns a Clock whose time starts at the Unix epoch, as the Mock's
// does.
func NewClock() *Clock {
	return &Clock{Mock: clock.NewMock(), Patience: defaultPatience, signal: make(chan struct{}, 1)}
}

// After registers a timer with the mock, exactly as the Mock does, and then
// records d for [Clock.NextWait]. The timer is registered before the test can
// learn of it, so advancing the clock after NextWait always wakes it.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	ch := c.Mock.After(d)
	c.mu.Lock()
	c.pending = append(c.pending, d)
	c.waits++
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
	return ch
}

// NextWait returns the delay of the next call to After that no NextWait has
// taken yet. It blocks until the code under test makes that call, and
// returns at once if the call has already been made. It fails tb if no call
// comes within c.Patience of real time. NextWait does not advance the clock.
func (c *Clock) NextWait(tb testing.TB) time.Duration {
	tb.Helper()
	timeout := time.NewTimer(c.Patience)
	defer timeout.Stop()
	for {
		c.mu.Lock()
		if len(c.pending) > 0 {
			d := c.pending[0]
			c.pending = c.pending[1:]
			c.mu.Unlock()
			return d
		}
		c.mu.Unlock()
		select {
		case <-c.signal:
		case <-timeout.C:
			tb.Fatalf("retrytest: no wait started within %v", c.Patience)
			return 0
		}
	}
}

// Step waits for the next wait with [Clock.NextWait], advances the clock by
// exactly the delay asked for, and returns that delay.
func (c *Clock) Step(tb testing.TB) time.Duration {
	tb.Helper()
	d := c.NextWait(tb)
	c.Add(d)
	return d
}

// Waits returns how many times After has been called so far.
func (c *Clock) Waits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waits
}
