package retrytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// defaultPatience is a new Clock's Patience.
const defaultPatience = 10 * time.Second

// Clock is a mock clock whose After also records the delay asked for and
// signals the test. It satisfies policy.Clock. Its time moves only when the
// test advances it, with [Clock.Add] or [Clock.Step]. Underneath it is
// github.com/benbjohnson/clock's Mock, which stays out of its API.
//
// Step and NextWait see only the waits made with After. A policy's attempt
// timeout runs on [Clock.WithTimeout] instead, so Step never ends it. To
// end an attempt by its timeout, the test moves the clock with Add. A
// Clock is safe for concurrent use, except
// that only one goroutine at a time may advance it with Add or Step: two
// Adds at once can move the time backwards. NextWait and Step fail the test
// through tb, so call them from the goroutine that runs the test. The zero
// Clock is not usable: call [NewClock].
type Clock struct {
	// Patience is how long, in real time, NextWait waits for the code
	// under test to start a wait before it fails the test: 10s in a Clock
	// from NewClock. Set it before use.
	Patience time.Duration

	mock    *clock.Mock
	mu      sync.Mutex
	pending []time.Duration // delays asked for and not yet taken by NextWait
	signal  chan struct{}   // holds a token while pending is not empty
}

// NewClock returns a Clock whose time starts at the Unix epoch.
func NewClock() *Clock {
	return &Clock{mock: clock.NewMock(), Patience: defaultPatience, signal: make(chan struct{}, 1)}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time { return c.mock.Now() }

// Add advances the clock by d and fires every timer, and every context from
// [Clock.WithTimeout], whose time has come, in order. It gives the
// goroutines they wake a moment of real time to run.
func (c *Clock) Add(d time.Duration) { c.mock.Add(d) }

// WithTimeout returns a copy of ctx that expires d later on this clock, as
// context.WithTimeout does on the real one. Package retry gives a policy's
// attempt timeout with it, and a test gives a call a deadline on the same
// clock as its policy (see policy.Clock). Its expiry is no wait for
// [Clock.NextWait].
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return c.mock.WithTimeout(ctx, d)
}

// After returns a channel that receives the clock's time once the clock
// has advanced by d, and records d for [Clock.NextWait]. The timer is
// registered before the test can learn of it, so advancing the clock after
// NextWait always wakes it.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	ch := c.mock.After(d)
	c.mu.Lock()
	c.pending = append(c.pending, d)
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
