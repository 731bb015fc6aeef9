package backoff

import (
	"math"
	"math/bits"
	"time"
)

// JitterKind names a way of spreading delays so that clients that failed
// together do not retry together. The zero JitterKind means no jitter: it
// waits the schedule's delay exactly. The text form of a policy names each
// kind: see policy.Policy.UnmarshalText.
type JitterKind uint8

// The jitter kinds. Each one's formula is given for a schedule delay d, the
// schedule's base b, the previous delay p, a fraction f and the cap c.
const (
	// Full waits uniform[0, d]: the widest spread, mean d/2.
	Full JitterKind = iota + 1
	// Equal waits d/2 + uniform[0, d/2]: never less than half of d.
	Equal
	// Decorrelated waits uniform[b, min(c, 3p)], where p is the previous
	// delay (b before the first). It ignores d: each delay grows from the
	// last drawn one. Drawing inside the clamp, rather than clamping the
	// draw, keeps clients from piling up at the cap.
	Decorrelated
	// Proportional waits d + uniform[0, f·d], one-sided as Kubernetes'
	// wait.Jitter. Near the cap the whole range moves down to
	// [c/(1+f), c], so clients at the cap stay spread.
	Proportional
	// Symmetric waits d·(1 + uniform[-f, f]) for 0 ≤ f ≤ 1, as gRPC's ±20 %.
	// Near the cap the range moves down to [c(1-f)/(1+f), c].
	Symmetric
)

// Jitter spreads the delays of a schedule. The zero Jitter, of the zero
// kind, is no jitter.
// Fraction is the f of Proportional and Symmetric. [Jitter.Apply] ignores
// it for the other kinds. Package policy checks it: Proportional takes a
// finite Fraction ≥ 0, Symmetric one from 0 to 1, and the other kinds only
// 0. A Jitter is a plain value: [Jitter.Apply] is a pure function of its
// arguments, safe for concurrent use.
type Jitter struct {
	Kind     JitterKind
	Fraction float64
}

// Apply returns the jittered delay for the schedule's delay d. The result is
// never negative and never above limit. The spread is placed inside the cap,
// never clamped onto it.
//
// The other arguments:
//   - prev is the delay waited before, 0 for the first wait;
//   - base is the schedule's first delay;
//   - limit is the cap, and a limit ≤ 0 means none;
//   - u must be a uniformly random 64-bit number. The same u gives the same
//     result, which is what makes a seeded schedule reproducible.
//
// Out-of-range inputs have a meaning, never a panic. A negative d, base or
// prev counts as zero. An unknown kind counts as the zero kind, no jitter. A Fraction that
// is negative or NaN counts as 0, and Symmetric takes one above 1 as 1.
// Package policy reports such fractions as invalid before they get here.
func (j Jitter) Apply(d, prev, base, limit time.Duration, u uint64) time.Duration {
	d, prev, base = max(d, 0), max(prev, 0), max(base, 0)
	if limit <= 0 {
		limit = maxDuration
	}
	d = min(d, limit)
	f := j.Fraction
	if !(f > 0) {
		f = 0
	}
	switch j.Kind {
	case Full:
		return uniform(0, d, u)
	case Equal:
		half := d / 2
		return d - half + uniform(0, half, u)
	case Decorrelated:
		lo := min(base, limit)
		if prev == 0 {
			prev = lo
		}
		hi := min(satMul(prev, 3), limit)
		return uniform(lo, max(hi, lo), u)
	case Proportional:
		e := inside(d, limit, 1+f)
		return uniform(e, min(satAdd(e, scale(e, f)), limit), u)
	case Symmetric:
		f = min(f, 1)
		e := inside(d, limit, 1+f)
		spread := scale(e, f)
		return uniform(e-spread, min(satAdd(e, spread), limit), u)
	default:
		return d
	}
}

// inside moves the centre of a range that reaches up to d·hi so that its top
// stays within limit.
func inside(d, limit time.Duration, hi float64) time.Duration {
	if float64(d)*hi <= float64(limit) {
		return d
	}
	return scale(limit, 1/hi)
}

// uniform returns a duration in [lo, hi] from u, without floating point.
func uniform(lo, hi time.Duration, u uint64) time.Duration {
	if hi <= lo {
		return lo
	}
	span := uint64(hi-lo) + 1 // hi-lo < 2^63, so no overflow
	top, _ := bits.Mul64(u, span)
	return lo + time.Duration(top)
}

// scale returns d·f for 0 ≤ f, saturated and rounded down.
func scale(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= float64(maxDuration) || math.IsNaN(x) {
		return maxDuration
	}
	return time.Duration(x)
}

func satAdd(a, b time.Duration) time.Duration {
	if a > maxDuration-b {
		return maxDuration
	}
	return a + b
}

func satMul(d time.Duration, k int64) time.Duration {
	if d > maxDuration/time.Duration(k) {
		return maxDuration
	}
	return d * time.Duration(k)
}
