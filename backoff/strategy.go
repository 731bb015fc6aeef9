package backoff

import (
	"math"
	"time"
)

// A Strategy hands out the delays of one sequence of attempts, one at a time.
// Next returns the delay before the next attempt. Reset starts the sequence
// over, for example after a success.
//
// A Strategy holds state, so it belongs to one sequence, such as one
// connection, one container or one key. Give each independent operation its
// own Strategy, or use package retry, which keeps that state on each call's
// stack. Each implementation says whether it is safe for concurrent use.
// Those this package returns are not: a Next takes no lock and costs a few
// nanoseconds, as in k8s's wait.Backoff.
type Strategy interface {
	Next() time.Duration // how long to wait before the next try
	Reset()              // after a success: the next Next starts over
}

// Default returns the Kubernetes kubelet back-off as a Strategy, which hands
// out its delays one at a time. Next returns 10s, 20s, 40s, 80s,
// 160s, then 300s forever. After Reset it starts again at 10s. These are the
// numbers of CrashLoopBackOff and ImagePullBackOff.
//
// The Strategy is not safe for concurrent use: give each goroutine its own.
// Cap(Exponential(10*time.Second, 2), 300*time.Second) gives the same delays
// as a pure function of the attempt number, which any number of goroutines
// can share.
//
// Default is for a loop of one's own. To retry calls, use policy.Default,
// the same numbers as a Policy to give to retry.Do.
func Default() Strategy {
	// The kubelet back-off in shift form: 10s<<0 … 10s<<4 stay under the cap.
	return &shifts{base: kubeletBase, limit: kubeletCap, exact: 5}
}

// NewStrategy returns a Strategy whose k-th Next since the last Reset returns
// s.Delay(k), or zero where that is negative. Wrap s in [Cap] to bound it. The
// count k saturates at math.MaxInt instead of wrapping.
//
// The Strategy is not safe for concurrent use: give each goroutine its own.
// A nil s is a programming error that no input can cause. It panics here,
// not at the first Next, and so does an s that holds a nil function or
// pointer.
func NewStrategy(s Schedule) Strategy {
	mustSchedule(s, "NewStrategy")
	if base, limit, ok := shiftForm(s); ok {
		return newShifts(base, limit)
	}
	return &strategy{s: s}
}

type strategy struct {
	s Schedule
	n int // attempts handed out since the last Reset
}

func (st *strategy) Next() time.Duration {
	if st.n < math.MaxInt {
		st.n++
	}
	return max(st.s.Delay(st.n), 0)
}

func (st *strategy) Reset() { st.n = 0 }

// shifts is the Strategy of the doubling and constant schedules, capped or
// not: the delay of attempt n is base<<(n-1) for the first exact attempts and
// limit after them. It calls no Schedule, so a Next is a compare and a shift.
type shifts struct {
	base, limit time.Duration
	exact       int // attempts whose delay is an exact shift of base, ≤ 63
	n           int // attempts handed out since the last Reset, ≤ exact
}

// newShifts returns the Strategy of min(base·2^(n-1), limit) when exact
// doubling applies, base > 0 and limit ≥ 0 (a zero base is a zero limit).
func newShifts(base, limit time.Duration) *shifts {
	st := &shifts{base: base, limit: limit}
	for st.exact < 63 && base > 0 && base <= limit>>st.exact {
		st.exact++
	}
	return st
}

func (st *shifts) Next() time.Duration {
	if n := st.n; n < st.exact {
		st.n++
		return st.base << n
	}
	return st.limit
}

func (st *shifts) Reset() { st.n = 0 }

// shiftForm reports whether s's delay for attempt n is min(base<<(n-1),
// limit), and gives base and limit. That holds for Exponential with factor 2,
// for schedules that never grow (Constant, Exponential with factor ≤ 1), and
// for either under Cap.
func shiftForm(s Schedule) (base, limit time.Duration, ok bool) {
	switch s := s.(type) {
	case constant:
		return 0, s.Delay(1), true
	case exponential:
		switch {
		case s.base <= 0:
			return 0, 0, true
		case s.factor == 2:
			return s.base, maxDuration, true
		case !(s.factor > 1):
			return 0, s.base, true
		}
	case capped:
		b, l, ok := shiftForm(s.s)
		if !ok {
			return 0, 0, false
		}
		if s.limit > 0 {
			l = min(l, s.limit)
			b = min(b, l) // a base above the cap never shifts
		}
		return b, l, true
	}
	return 0, 0, false
}
