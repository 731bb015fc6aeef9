package backoff

import (
	"math"
	"sync"
	"time"
)

// A Strategy hands out the delays of one sequence of attempts, one at a time.
//
// It holds state, so it belongs to one sequence: one connection, one
// container, one key. To run independent operations, give each its own
// Strategy, or use package retry, which keeps that state on each call's stack.
type Strategy interface {
	Next() time.Duration // how long to wait before the next try
	Reset()              // after a success: the next Next starts over
}

// Default returns the Kubernetes kubelet back-off: 10s, 20s, 40s, 80s, 160s,
// then 300s for ever; after Reset it starts again at 10s. These are the
// numbers of CrashLoopBackOff and ImagePullBackOff.
func Default() Strategy {
	return NewStrategy(Cap(Exponential{Base: 10 * time.Second, Factor: 2}, 300*time.Second))
}

// NewStrategy returns a Strategy whose k-th Next since the last Reset returns
// s.Delay(k). Wrap s in [Cap] to bound it. The count saturates at math.MaxInt
// rather than wrapping.
//
// The Strategy is safe for concurrent use, though goroutines sharing one
// share its sequence too. A nil s is a programming error no input can cause,
// and panics here rather than at the first Next.
func NewStrategy(s Schedule) Strategy {
	mustSchedule(s, "NewStrategy")
	return &strategy{s: s}
}

type strategy struct {
	s  Schedule
	mu sync.Mutex
	n  int // attempts handed out since the last Reset
}

func (st *strategy) Next() time.Duration {
	st.mu.Lock()
	if st.n < math.MaxInt {
		st.n++
	}
	n := st.n
	st.mu.Unlock()
	return max(st.s.Delay(n), 0)
}

func (st *strategy) Reset() {
	st.mu.Lock()
	st.n = 0
	st.mu.Unlock()
}
