package backoff

import (
	"math"
	"time"
)

// Exponential returns a schedule that waits base after the first attempt
// and multiplies the delay by factor after each further one:
// base·factor^(n-1) for attempt n.
//
// The delay is computed in closed form and saturates at the largest
// time.Duration instead of overflowing. So it is defined for every n up to
// math.MaxInt and never decreases as n grows. Out-of-range arguments have a
// documented meaning rather than a panic. A base ≤ 0 waits zero, a factor
// below 1 (or NaN) is taken as 1, and n < 1 as 1. Package policy rejects
// such values before they get here. The schedule is safe for concurrent use.
//
// This is the bare schedule: delays only, for code that computes its own.
// To retry calls, reach for policy.Exponential, which builds on it and adds
// a cap, limits, jitter and which errors to retry.
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
