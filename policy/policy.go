package policy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// Policy says how to retry: the schedule of delays, its cap, when to stop
// and which errors to retry. It is an immutable value: every With… method
// returns a modified copy and never changes its receiver, so one Policy can
// be shared by any number of goroutines and calls.
//
// The zero Policy is the [Default] policy.
type Policy struct {
	c *config // never written after the constructor or With… that made it
}

type kind uint8

const (
	exponential kind = iota
	constant
	custom
)

type config struct {
	kind        kind
	base        time.Duration // exponential and constant
	factor      float64       // exponential; 1 for the others, which do not grow
	sched       backoff.Schedule
	cap         time.Duration // 0: none
	maxAttempts int           // 0: no limit
	maxElapsed  time.Duration // 0: no limit
	retryIf     func(error) bool
	clock       Clock
	err         error // what Validate reports, worked out once per value
}

var defaultConfig = config{
	kind:   exponential,
	base:   10 * time.Second,
	factor: 2,
	cap:    300 * time.Second,
}

func (p Policy) cfg() *config {
	if p.c == nil {
		return &defaultConfig
	}
	return p.c
}

// with copies the receiver's settings, lets change edit the copy and seals it.
func (p Policy) with(change func(*config)) Policy {
	c := *p.cfg()
	change(&c)
	c.err = c.validate()
	return Policy{c: &c}
}

// Default returns the Kubernetes kubelet back-off: 10s after the first
// attempt, doubling, capped at 300s, with no attempt or time limit and no
// jitter. Attempts start at 0, 10, 30, 70, 150, 310, 610, 910s, …
func Default() Policy { return Policy{} }

// Exponential returns a policy that waits base after the first attempt and
// doubles the delay after each further one, with no cap and no limit. Set
// the growth with [Policy.WithFactor] and bound it with [Policy.WithCap].
// A base ≤ 0 makes the policy invalid.
func Exponential(base time.Duration) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: exponential, base: base, factor: 2}
	})
}

// Constant returns a policy that waits d after every attempt, with no limit.
// Constant(0) retries at once, with no timer. A negative d makes the policy
// invalid.
func Constant(d time.Duration) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: constant, base: d, factor: 1}
	})
}

// Custom returns a policy that waits s.Delay(n) after failed attempt n, with
// no cap and no limit. A negative delay from s is waited as zero. A nil s
// makes the policy invalid.
func Custom(s backoff.Schedule) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: custom, sched: s, factor: 1}
	})
}

// WithFactor returns a copy whose exponential delay grows by factor after
// each attempt. Factor 1 waits the base every time. Only exponential
// policies have a factor; a factor below 1, NaN or infinite, or a factor on
// a constant or custom policy, makes the policy invalid.
func (p Policy) WithFactor(factor float64) Policy {
	return p.with(func(c *config) { c.factor = factor })
}

// WithCap returns a copy that never waits longer than limit. The cap is a
// ceiling, not a stop condition: once reached, every further wait is limit.
// WithCap(0) removes the cap. A negative limit, or one below the base delay,
// makes the policy invalid.
func (p Policy) WithCap(limit time.Duration) Policy {
	return p.with(func(c *config) { c.cap = limit })
}

// WithMaxAttempts returns a copy that makes at most n attempts. Attempts
// count the first call: n == 1 means no retry, n == 3 means the call and two
// retries. WithMaxAttempts(0) removes the limit; a negative n makes the
// policy invalid.
func (p Policy) WithMaxAttempts(n int) Policy {
	return p.with(func(c *config) { c.maxAttempts = n })
}

// WithMaxElapsed returns a copy that gives up rather than start a wait that
// would end more than d after the start of the retry.Do call (measured anew
// for every call, never from the policy's construction). Attempts already
// running are not interrupted; use a context deadline for that.
// WithMaxElapsed(0) removes the limit; a negative d makes the policy invalid.
func (p Policy) WithMaxElapsed(d time.Duration) Policy {
	return p.with(func(c *config) { c.maxElapsed = d })
}

// WithClock returns a copy that reads time from clk. nil means the real
// clock.
func (p Policy) WithClock(clk Clock) Policy {
	return p.with(func(c *config) { c.clock = clk })
}

// WithRetryIf returns a copy that retries an error only when retryable
// returns true for it; any other error ends the call at once and is returned
// as it is. nil restores the default: every error is retried, except those
// marked with retry.Permanent. The function must be safe for concurrent use.
func (p Policy) WithRetryIf(retryable func(error) bool) Policy {
	return p.with(func(c *config) { c.retryIf = retryable })
}

// Validate reports what is wrong with the policy, or nil. Its errors match
// [ErrInvalid] and name the setting at fault; several faults are joined.
func (p Policy) Validate() error { return p.cfg().err }

// Delay returns the wait after failed attempt n (n ≥ 1; n < 1 counts as 1),
// capped and never negative. It is defined for every n up to math.MaxInt.
func (p Policy) Delay(n int) time.Duration {
	c := p.cfg()
	var d time.Duration
	switch c.kind {
	case exponential:
		d = backoff.Exponential{Base: c.base, Factor: c.factor}.Delay(n)
	case constant:
		d = backoff.Constant(c.base).Delay(n)
	case custom:
		d = max(c.sched.Delay(n), 0)
	}
	if c.cap > 0 && d > c.cap {
		d = c.cap
	}
	return d
}

// MaxAttempts returns the attempt limit, counting the first call; 0 means
// no limit.
func (p Policy) MaxAttempts() int { return p.cfg().maxAttempts }

// MaxElapsed returns the time limit of one call; 0 means no limit.
func (p Policy) MaxElapsed() time.Duration { return p.cfg().maxElapsed }

// Cap returns the ceiling on every delay; 0 means none.
func (p Policy) Cap() time.Duration { return p.cfg().cap }

// Clock returns the policy's clock, or nil for the real clock.
func (p Policy) Clock() Clock { return p.cfg().clock }

// Retryable reports whether the policy retries err. Package retry asks it
// after handling retry.Permanent.
func (p Policy) Retryable(err error) bool {
	c := p.cfg()
	return c.retryIf == nil || c.retryIf(err)
}

// String describes the policy in words, for example
// "exponential 10s x2 cap 5m0s" or "constant 1s attempts 5 elapsed 1m0s".
func (p Policy) String() string {
	c := p.cfg()
	var b strings.Builder
	switch c.kind {
	case exponential:
		fmt.Fprintf(&b, "exponential %v x%s", c.base, strconv.FormatFloat(c.factor, 'g', -1, 64))
	case constant:
		fmt.Fprintf(&b, "constant %v", c.base)
	case custom:
		b.WriteString("custom")
	}
	if c.cap != 0 {
		fmt.Fprintf(&b, " cap %v", c.cap)
	}
	if c.maxAttempts != 0 {
		fmt.Fprintf(&b, " attempts %d", c.maxAttempts)
	}
	if c.maxElapsed != 0 {
		fmt.Fprintf(&b, " elapsed %v", c.maxElapsed)
	}
	return b.String()
}

func (c *config) validate() error {
	var errs []error
	bad := func(setting, format string, args ...any) {
		errs = append(errs, &invalidError{setting: setting, reason: fmt.Sprintf(format, args...)})
	}
	k := c.kind
	if k != exponential && c.factor != 1 {
		bad("factor", "%v given to a %s policy; only exponential policies grow", c.factor, kindName(k))
	}
	switch k {
	case exponential:
		if c.base <= 0 {
			bad("base", "%v is not positive; an exponential schedule needs a positive base (Constant(0) retries at once)", c.base)
		}
		if math.IsNaN(c.factor) || math.IsInf(c.factor, 0) || c.factor < 1 {
			bad("factor", "%v is not a finite number ≥ 1", c.factor)
		}
	case constant:
		if c.base < 0 {
			bad("delay", "%v is negative", c.base)
		}
	case custom:
		if c.sched == nil {
			bad("schedule", "nil")
		}
	}
	switch {
	case c.cap < 0:
		bad("cap", "%v is negative (0 means no cap)", c.cap)
	case c.cap > 0 && k != custom && c.cap < c.base:
		bad("cap", "%v is below the base delay %v", c.cap, c.base)
	}
	if c.maxAttempts < 0 {
		bad("attempts", "%d is negative (attempts count the first call; 0 means no limit)", c.maxAttempts)
	}
	if c.maxElapsed < 0 {
		bad("elapsed", "%v is negative (0 means no limit)", c.maxElapsed)
	}
	return errors.Join(errs...)
}

func kindName(k kind) string {
	switch k {
	case exponential:
		return "exponential"
	case constant:
		return "constant"
	default:
		return "custom"
	}
}
