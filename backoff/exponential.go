package backoff

import (
	"math"
	"time"
)

// Exponential returns a schedule that waits base after attempt 1 and
// multiplies the delay by factor after each further attempt. The delay after
// attempt n is base·factor^(n-1).
//
// The delay saturates at the largest time.Duration instead of overflowing.
// It is defined for every n up to math.MaxInt, and it never decreases as n
// grows. Out-of-range arguments have a meaning, never a panic. A base ≤ 0
// waits zero. A factor below 1, or NaN, counts as 1. An n below 1 counts as
// 1. The schedule is safe for concurrent use.
//
// Exponential is the bare schedule, for code that only needs delays.
// policy.Exponential is the Policy to give to retry.Do: it is built on this
// schedule, doubles unless told otherwise, and adds a cap, limits, jitter and
// which errors to retry. It reports the out-of-range values above as invalid.
func Exponential(base time.Duration, factor float64) Schedule {
	return exponential{base: base, factor: factor}
}

type exponential struct {
	base   time.Duration
	factor float64
}

func (e exponential) Delay(n int) time.Duration {
	if e.base <= 0 {
		return 0
	}
	if n <= 1 || !(e.factor > 1) {
		return e.base
	}
	steps := n - 1
	if e.factor == 2 {
		// The kubelet case, exact in integers: base << steps, saturated.
		if steps >= 63 || e.base > maxDuration>>steps {
			return maxDuration
		}
		return e.base << steps
	}
	if math.IsInf(e.factor, 1) {
		return maxDuration
	}
	f := float64(e.base) * math.Pow(e.factor, float64(steps))
	// float64(maxDuration) rounds up to 2^63, which no Duration can hold.
	if f >= float64(maxDuration) || math.IsNaN(f) {
		return maxDuration
	}
	return time.Duration(f)
}
