package backoff

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/nilness"
)

// A Schedule gives the delay to wait after failed attempt n, for n ≥ 1.
//
// Implementations must be pure and safe for concurrent use. The same n must
// always give the same delay. The schedules of this package never return a
// negative delay, and they treat an n below 1 as 1.
type Schedule interface {
	Delay(n int) time.Duration
}

// ScheduleFunc adapts an ordinary function to a [Schedule], as
// http.HandlerFunc does for handlers. The function must be pure and safe for
// concurrent use, as every Schedule must.
//
// Delay returns the function's result unchanged, a negative one included. A
// negative delay is the function's own bug. [Cap], [NewStrategy], [Keyed] and
// package policy all count it as zero.
type ScheduleFunc func(n int) time.Duration

var _ Schedule = ScheduleFunc(nil)

// Delay returns f(n).
func (f ScheduleFunc) Delay(n int) time.Duration { return f(n) }

// maxDuration is the saturation point of every computation here.
const maxDuration = time.Duration(math.MaxInt64)

// Constant returns a schedule that waits d after every attempt. A d ≤ 0
// waits zero, so the caller retries at once.
//
// Constant is the bare schedule, for code that only needs delays.
// policy.Constant is the Policy to give to retry.Do: it adds limits and which
// errors to retry.
func Constant(d time.Duration) Schedule { return constant(max(d, 0)) }

type constant time.Duration

func (c constant) Delay(int) time.Duration { return time.Duration(c) }

// Cap returns a schedule that never waits longer than limit. Its delay for n
// is min(s.Delay(n), limit), and a negative delay from s counts as zero. A
// limit ≤ 0 means no cap, so the result only turns negative delays into zero.
//
// The cap is a ceiling, never a stop condition. Once s reaches the cap, every
// further attempt waits the cap. A nil s panics here, not at the first Delay,
// and so does an s that holds a nil function or pointer, such as
// ScheduleFunc(nil).
func Cap(s Schedule, limit time.Duration) Schedule {
	mustSchedule(s, "Cap")
	return capped{s: s, limit: limit}
}

// kubelet is the Kubernetes kubelet back-off as a Schedule, the one of
// [Default] and of a zero [Keyed]: Cap(Exponential(10*time.Second, 2),
// 300*time.Second).
func kubelet() Schedule {
	return capped{s: exponential{base: kubeletBase, factor: 2}, limit: kubeletCap}
}

// The first delay and the cap of the kubelet back-off.
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
