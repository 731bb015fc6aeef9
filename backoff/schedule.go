package backoff

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/nilness"
)

// A Schedule gives the delay to wait after failed attempt n, for n ≥ 1.
//
// Implementations must be pure and safe for concurrent use: the same n always
// gives the same delay. The schedules in this package never return a negative
// delay and treat n < 1 as 1.
type Schedule interface {
	Delay(n int) time.Duration
}

// ScheduleFunc adapts an ordinary function to a [Schedule], in the manner of
// http.HandlerFunc. The function is called as it is: a negative result is
// the function's own bug, and package policy clamps it to zero.
type ScheduleFunc func(n int) time.Duration

var _ Schedule = ScheduleFunc(nil)

// Delay returns f(n).
func (f ScheduleFunc) Delay(n int) time.Duration { return f(n) }

// maxDuration is the saturation point of every computation here.
const maxDuration = time.Duration(math.MaxInt64)

// Constant returns a schedule that waits d after every attempt. A d ≤ 0
// waits zero: it retries at once.
//
// This is the bare schedule. To retry calls, reach for policy.Constant,
// which adds limits and which errors to retry.
func Constant(d time.Duration) Schedule { return constant(max(d, 0)) }

type constant time.Duration

func (c constant) Delay(int) time.Duration { return time.Duration(c) }

// Cap returns a schedule that never waits longer than limit: the delay for n
// is min(s.Delay(n), limit), and never negative. A limit ≤ 0 means no cap;
// the result then only clamps negative delays to zero.
//
// The cap is a ceiling, never a stop condition: attempts past the point where
// the cap is reached keep waiting the cap. A nil s, or one holding a nil
// function or pointer (ScheduleFunc(nil)), panics here rather than at the
// first Delay.
func Cap(s Schedule, limit time.Duration) Schedule {
	mustSchedule(s, "Cap")
	return capped{s: s, limit: limit}
}

// Kubelet returns the Kubernetes kubelet numbers as a Schedule: a pure
// function of the attempt number, safe to share. The delays are 10s after
// the first failure, doubling, capped at 300s: the numbers of
// CrashLoopBackOff and of client-go's ImagePullBackOff. It is
// Cap(Exponential(10*time.Second, 2), 300*time.Second).
//
// [Default] is the same numbers as a Strategy, which keeps its place and
// hands them out one at a time. A zero [Keyed] uses Kubelet.
func Kubelet() Schedule {
	return capped{s: exponential{base: kubeletBase, factor: 2}, limit: kubeletCap}
}

// The first delay and the cap of [Kubelet].
const (
	kubeletBase = 10 * time.Second
	kubeletCap  = 300 * time.Second
)

// mustSchedule panics, at construction rather than at first use, for a nil
// schedule: a programming error that no configuration can cause (package
// policy reports a nil custom schedule as an invalid policy instead).
func mustSchedule(s Schedule, fn string) {
	if nilness.Of(s) {
		panic("backoff: " + fn + ": nil Schedule")
	}
}

type capped struct {
	s     Schedule
	limit time.Duration
}

func (c capped) Delay(n int) time.Duration {
	d := max(c.s.Delay(n), 0)
	if c.limit > 0 && d > c.limit {
		return c.limit
	}
	return d
}
