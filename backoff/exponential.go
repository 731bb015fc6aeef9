package backoff

import (
	"math"
	"time"
)

// Exponential waits Base after the first attempt and multiplies the delay by
// Factor after each further one: Base·Factor^(n-1) for attempt n.
//
// The delay is computed in closed form and saturates at the largest
// time.Duration instead of overflowing, so it is defined for every n up to
// math.MaxInt and never decreases as n grows. Out-of-range fields have a
// documented meaning rather than a panic: a Base ≤ 0 waits zero, a Factor
// below 1 (or NaN) is taken as 1, and n < 1 as 1. Package policy rejects such
// values before they get here.
//
// A zero Exponential waits zero. Exponential is a plain value, safe for
// concurrent use.
//
// Both packages have an Exponential because they answer different
// questions. This one is the bare schedule: delays only, for code that
// computes its own. To retry calls, reach for policy.Exponential, which
// builds on it and adds a cap, limits, jitter and which errors to retry.
type Exponential struct {
	Base   time.Duration
	Factor float64
}

var _ Schedule = Exponential{}

// Delay returns the delay after failed attempt n.
func (e Exponential) Delay(n int) time.Duration {
	if e.Base <= 0 {
		return 0
	}
	if n <= 1 || !(e.Factor > 1) {
		return e.Base
	}
	steps := n - 1
	if e.Factor == 2 {
		// The kubelet case, exact in integers: Base << steps, saturated.
		if steps >= 63 || e.Base > maxDuration>>steps {
			return maxDuration
		}
		return e.Base << steps
	}
	if math.IsInf(e.Factor, 1) {
		return maxDuration
	}
	f := float64(e.Base) * math.Pow(e.Factor, float64(steps))
	// float64(maxDuration) rounds up to 2^63, which no Duration can hold.
	if f >= float64(maxDuration) || math.IsNaN(f) {
		return maxDuration
	}
	return time.Duration(f)
}
