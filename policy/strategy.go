package policy

import (
	"math"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// Strategy returns a stateful backoff.Strategy that hands out this policy's
// delays (jitter included) one at a time, for code that keeps its own loop.
//
// Reset always starts over: calling it is the caller's own decision (after a
// success, say), whatever the policy's reset rule. The rule governs only the
// automatic start-overs: a Next that comes more than ResetRule.AfterIdle after
// the previous one starts over, and so does one whose run, from the end of
// the previous delay, lasted ResetRule.AfterStableRun or more. Time is read from
// the policy's clock. Attempt and time limits are not a Strategy's concern
// and are ignored.
//
// The Strategy is safe for concurrent use, though goroutines sharing one
// share its sequence.
func (p Policy) Strategy() backoff.Strategy {
	return &strategy{p: p}
}

type strategy struct {
	p Policy

	mu   sync.Mutex
	n    int           // delays handed out since the last start-over
	prev time.Duration // the last delay handed out
	last time.Time     // when it was handed out
}

func (s *strategy) Next() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.p.cfg().reset
	if s.n > 0 && (r.AfterIdle > 0 || r.AfterStableRun > 0) {
		now := s.now()
		idle := now.Sub(s.last)
		if r.StartsOver(false, idle-s.prev, idle) {
			s.n, s.prev = 0, 0
		}
	}
	if s.n < math.MaxInt {
		s.n++
	}
	s.prev = s.p.Backoff(s.n, s.prev)
	if r.AfterIdle > 0 || r.AfterStableRun > 0 {
		s.last = s.now()
	}
	return s.prev
}

func (s *strategy) Reset() {
	s.mu.Lock()
	s.n, s.prev = 0, 0
	s.mu.Unlock()
}

func (s *strategy) now() time.Time {
	if clk := s.p.cfg().clock; clk != nil {
		return clk.Now()
	}
	return time.Now()
}
