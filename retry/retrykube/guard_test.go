package retrykube_test

import (
	"sync"
	"time"
)

// tokenGuard stands in for the policy's guard until policy.Guard has its
// Allow and Record: the rule policy.Guard documents (gRPC's retry
// throttling), a bucket that starts full, loses a token per failure, gains
// ratio per success, and allows retries while more than half full.
type tokenGuard struct {
	mu               sync.Mutex
	tokens, capacity float64
	ratio            float64
}

func newTokenGuard(capacity, ratio float64) *tokenGuard {
	return &tokenGuard{tokens: capacity, capacity: capacity, ratio: ratio}
}

func (g *tokenGuard) Allow(time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokens > g.capacity/2
}

func (g *tokenGuard) Record(_, failed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if failed {
		g.tokens = max(g.tokens-1, 0)
	} else {
		g.tokens = min(g.tokens+g.ratio, g.capacity)
	}
}
