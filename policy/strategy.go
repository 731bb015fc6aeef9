package policy

import (
	"math"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// Strategy returns a stateful backoff.Strategy that hands out this policy's
// delays one at a time, jitter included, for code that keeps its own loop.
//
// Reset always starts over, whatever the policy's reset rule: calling it is
// the caller's decision. The rule governs only the automatic start-overs.
// With ResetRule.AfterIdle, a Next that comes more than AfterIdle after the
// previous one starts over. With ResetRule.AfterStableRun, so does a Next
// that comes AfterStableRun or more after the end of the previous delay.
// ResetRule.OnSuccess does nothing here, since a Strategy is not told of
// successes. Time is read from the policy's clock. The Strategy ignores
// attempt and time limits.
//
// The Strategy is safe for concurrent use. Goroutines that share one share
// its sequence.
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
