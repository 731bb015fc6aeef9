package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/nilness"
)

// Policy says how to retry: the delays to wait, when to stop and which errors
// to retry. A Policy is an immutable value. Every With… method returns a
// modified copy and never changes its receiver, so one Policy is safe for
// concurrent use by any number of goroutines and calls.
//
// The zero Policy is invalid, so that a policy left unset, such as a field
// missing from a configuration file, is an error rather than a policy that
// retries forever. Start from [Default], [Exponential], [Constant],
// [Custom] or [Parse].
type Policy struct {
	c *config // never written after the constructor or With… that made it
}

type kind uint8

const (
	unset kind = iota // the zero Policy: invalid
	exponential
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
	jitter      backoff.Jitter
	random      func() uint64 // nil: math/rand/v2's global source
	attemptTime time.Duration // per-attempt timeout; 0: none
	reset       ResetRule
	maxHint     time.Duration // the longest hinted wait honoured
	schedOK     bool          // sched can be called: not nil, nor a nil function or pointer
	guard       *Guard
	hedge       Hedging
	err         error         // what Validate reports, worked out once per value
	shifts      uint          // for a valid doubling or constant schedule, delay(n) is base << (n-1) for n-1 < shifts,
	ceiling     time.Duration // and ceiling (the cap, saturation, or the constant) after
	exact       uint          // shifts, for a policy without jitter; 0 otherwise
}

var defaultConfig = sealed(config{
	kind:    exponential,
	base:    10 * time.Second,
	factor:  2,
	cap:     300 * time.Second,
	reset:   resetOnSuccess,
	maxHint: defaultMaxHint,
})

// zeroConfig is the settings of the zero Policy.
var zeroConfig = sealed(config{reset: resetOnSuccess, maxHint: defaultMaxHint})

func (p Policy) cfg() *config {
	if p.c == nil {
		return &zeroConfig
	}
	return p.c
}

// with copies the receiver's settings, lets change edit the copy and seals it.
func (p Policy) with(change func(*config)) Policy {
	c := *p.cfg()
	change(&c)
	c.seal()
	return Policy{c: &c}
}

// Default returns the Kubernetes kubelet back-off. The first retry waits
// 10s after the first failed attempt. Each further wait doubles, up to
// 300s. There is no jitter. Attempts start at 0, 10, 30, 70, 150, 310, 610,
// 910s, … It has no attempt or time limit, so a call retries forever until
// it succeeds, returns an error not to be retried, or its context ends. Add a limit with
// [Policy.WithMaxAttempts] or [Policy.WithMaxElapsed].
//
// To keep this shape with a shorter first wait, build it from
// [Exponential]: Exponential(100*time.Millisecond).WithCap(3*time.Second)
// waits 100ms, 200ms, 400ms, … up to 3s. Default has no setter for its
// base.
//
// Default is the Policy to give to retry.Do. backoff.Default gives the same
// delays as a stateful backoff.Strategy, for a loop of one's own.
func Default() Policy { return Policy{c: &defaultConfig} }

// Exponential returns a policy that waits base after the first attempt and
// doubles the delay after each further one. It has no cap, no jitter and no
// attempt or time limit. Set the growth with [Policy.WithFactor] and bound it with
// [Policy.WithCap]. A base ≤ 0 makes the policy invalid.
//
// Exponential is the Policy to give to retry.Do. backoff.Exponential is the
// bare schedule it is built on, for code that only needs delays: a pure
// function of the attempt number, which takes the factor as an argument.
func Exponential(base time.Duration) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: exponential, base: base, factor: 2, reset: resetOnSuccess, maxHint: defaultMaxHint}
	})
}

// Constant returns a policy that waits d after every attempt, with no
// jitter and no attempt or time limit. Constant(0) retries at once, with no timer. A
// negative d makes the policy invalid.
//
// Constant is the Policy to give to retry.Do. backoff.Constant is the bare
// schedule, for code that only needs delays.
func Constant(d time.Duration) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: constant, base: d, factor: 1, reset: resetOnSuccess, maxHint: defaultMaxHint}
	})
}

// Custom returns a policy that waits s.Delay(n) after failed attempt n, with
// no cap, no jitter and no attempt or time limit. A negative delay from s counts as
// zero. A nil s makes the policy invalid, and so does an s that holds a nil
// function or pointer, such as backoff.ScheduleFunc(nil).
func Custom(s backoff.Schedule) Policy {
	return Policy{}.with(func(c *config) {
		*c = config{kind: custom, sched: s, factor: 1, reset: resetOnSuccess, maxHint: defaultMaxHint}
	})
}

// WithFactor returns a copy whose exponential delay grows by factor after
// each attempt. Factor 1 waits the base every time. A factor below 1, NaN or
// infinite makes the policy invalid. Only exponential policies grow, so any
// factor other than 1 makes a constant or custom policy invalid.
func (p Policy) WithFactor(factor float64) Policy {
	return p.with(func(c *config) { c.factor = factor })
}

// WithCap returns a copy whose scheduled waits never exceed limit, jitter
// included. The cap never ends a call: a longer delay waits the cap
// instead. A wait that a server asks for may be longer than the cap (see
// [Policy.WithMaxHint]). WithCap(0) removes the cap. A negative limit makes
// the policy invalid, and so does one below the base delay of an
// exponential or constant policy.
func (p Policy) WithCap(limit time.Duration) Policy {
	return p.with(func(c *config) { c.cap = limit })
}

// WithMaxAttempts returns a copy that makes at most n attempts. Attempts
// count the first attempt: n == 1 means no retry, n == 3 means the first
// attempt and two retries. A call that reaches the limit ends with an
// error matching retry.ErrExhausted. WithMaxAttempts(0) removes the limit.
// A negative n makes the policy invalid.
func (p Policy) WithMaxAttempts(n int) Policy {
	return p.with(func(c *config) { c.maxAttempts = n })
}

// WithMaxElapsed returns a copy that gives up rather than start a wait that
// would end more than d after the start of the call, its first attempt
// included. A call that the limit ends returns an error matching
// retry.ErrExhausted. The limit never interrupts a running attempt: give
// the context a deadline for that. WithMaxElapsed(0) removes the limit. A
// negative d makes the policy invalid.
func (p Policy) WithMaxElapsed(d time.Duration) Policy {
	return p.with(func(c *config) { c.maxElapsed = d })
}

// WithClock returns a copy that reads time from clk. nil means the real
// clock. A typed nil, such as a nil *clock.Mock, makes the policy invalid.
func (p Policy) WithClock(clk Clock) Policy {
	return p.with(func(c *config) { c.clock = clk })
}

// WithRetryIf returns a copy that retries an error only when retryable
// returns true for it. Any other error ends the call at once and is returned
// as it is. nil restores the default: every error is retried, except those
// marked with retry.Permanent. The function must be safe for concurrent use.
//
// WithRetryIf only narrows. In an integration, it is asked after the
// integration's own classification, which retryhttp.WithClassifier,
// retrygrpc.WithCodes and retrysql.WithSQLStates replace. It can refuse an
// error they retry, and never retries one they refuse.
func (p Policy) WithRetryIf(retryable func(error) bool) Policy {
	return p.with(func(c *config) { c.retryIf = retryable })
}

// WithJitter returns a copy that spreads its delays with j. backoff.JitterKind
// gives each kind's formula. The jittered delay stays within the cap.
// Proportional takes a finite Fraction ≥ 0, Symmetric one from 0 to 1, and
// the other kinds only 0. Any other Fraction makes the policy invalid, and
// so does an unknown kind.
func (p Policy) WithJitter(j backoff.Jitter) Policy {
	return p.with(func(c *config) { c.jitter = j })
}

// WithRandom returns a copy that draws its jitter from src, so that a test
// can reproduce a schedule from a seed, for example with
// rand.NewPCG(seed, seed).
// The policy serialises its use of src, which need not be safe for
// concurrent use. nil restores the default: math/rand/v2's global source,
// which is safe for concurrent use and allocation-free.
func (p Policy) WithRandom(src rand.Source) Policy {
	return p.with(func(c *config) {
		c.random = nil
		if src != nil {
			var mu sync.Mutex
			c.random = func() uint64 {
				mu.Lock()
				defer mu.Unlock()
				return src.Uint64()
			}
		}
	})
}

// WithAttemptTimeout returns a copy that gives each attempt a context that
// expires d after the attempt starts. An attempt cut off this way is
// retried, unless the caller's context is done too. The deadline follows the
// policy's clock when the clock has a WithTimeout method, as
// benbjohnson/clock's Mock does. WithAttemptTimeout(0) removes the timeout.
// A negative d makes the policy invalid.
//
// An attempt that its own timeout cut off has an error matching
// retry.ErrAttemptTimeout. One that the caller's context cut off does not,
// and the call ends with the context's error. context.DeadlineExceeded does
// not tell the two apart: both match it.
func (p Policy) WithAttemptTimeout(d time.Duration) Policy {
	return p.with(func(c *config) { c.attemptTime = d })
}

// WithResetRule returns a copy that starts its sequence over by rule r. The
// default is ResetRule{OnSuccess: true}. The kubelet's crash-loop rule is
// ResetRule{AfterStableRun: 10 * time.Minute}. A negative duration in r
// makes the policy invalid.
func (p Policy) WithResetRule(r ResetRule) Policy {
	return p.with(func(c *config) { c.reset = r })
}

// WithGuard returns a copy whose retries go ahead only while g admits them.
// Give one g to every policy that calls the same dependency; [Guard] says
// what it does. WithGuard(nil) removes the guard. An invalid guard makes
// the policy invalid.
func (p Policy) WithGuard(g *Guard) Policy {
	return p.with(func(c *config) { c.guard = g })
}

// defaultMaxHint is the hint ceiling of every policy until
// [Policy.WithMaxHint] changes it.
const defaultMaxHint = 5 * time.Minute

// WithMaxHint returns a copy whose hint ceiling is d. The default is five
// minutes, the kubelet's cap. A d ≤ 0 makes the policy invalid. To honour
// any hint, give a very large d.
//
// A hint is a wait that the operation asks for before its next attempt,
// with retry.After, a server's Retry-After or gRPC pushback. The call
// waits a hint as given, even above the cap: coming back earlier than a
// server asked only earns another refusal. A hint above d ends the call at
// once, with an error matching retry.ErrHintTooLong, so the call never
// sleeps for hours and never quietly shortens the wait. A hint that would
// end past the context's deadline or the time limit ends the call the same
// way.
func (p Policy) WithMaxHint(d time.Duration) Policy {
	return p.with(func(c *config) { c.maxHint = d })
}

// Validate reports what is wrong with the policy, or nil. Its errors match
// [ErrInvalid] and name the setting at fault. Several faults are joined.
func (p Policy) Validate() error { return p.cfg().err }

// delay returns the wait after failed attempt n (n ≥ 1; n < 1 counts as 1),
// capped, not jittered and never negative. It is defined for every n up to
// math.MaxInt.
func (p Policy) delay(n int) time.Duration {
	c := p.cfg()
	// A valid doubling schedule is an exact shift below its ceiling (the
	// cap, or saturation) and the ceiling after: worked out on the spot.
	// Everything else takes the general path.
	if c.shifts > 0 {
		if k := uint(n - 1); k < c.shifts {
			return c.base << (k & 63)
		}
		if n > 0 {
			return c.ceiling
		}
	}
	return c.delay(n)
}

// delay is Policy.delay's general path.
func (c *config) delay(n int) time.Duration {
	var d time.Duration
	switch c.kind {
	case exponential:
		d = backoff.Exponential(c.base, c.factor).Delay(n)
	case constant:
		d = backoff.Constant(c.base).Delay(n)
	case custom:
		if c.schedOK { // a nil schedule makes the policy invalid; its Delay is still defined
			d = max(c.sched.Delay(n), 0)
		}
	}
	if c.cap > 0 && d > c.cap {
		d = c.cap
	}
	return d
}

// Backoff returns the wait after failed attempt n, jitter included. An n
// below 1 counts as 1. prev is the wait before this one, 0 for the first. The
// wait is defined for every n up to math.MaxInt, never negative and never
// above the cap.
//
// Backoff and [Policy.Retryable] are what a loop of one's own needs from a
// policy, after [Policy.Validate] said it is valid: an invalid policy's
// waits are defined but mean nothing (the zero Policy's are all 0).
// Package retry's loop is built on them. Without
// jitter, Backoff is a pure function of n: the kubelet policy, Default,
// gives 10s, 20s, 40s, 80s, 160s, 300s, 300s, …
func (p Policy) Backoff(n int, prev time.Duration) time.Duration {
	// Without jitter, a doubling or constant schedule is an exact shift
	// below its ceiling and the ceiling after: small enough for Backoff to
	// be inlined into its caller.
	if c := p.cfg(); c.exact > 0 && n > 0 {
		if k := uint(n - 1); k < c.exact {
			return c.base << (k & 63)
		}
		return c.ceiling
	}
	return p.backoff(n, prev)
}

// backoff is Backoff's general path.
func (p Policy) backoff(n int, prev time.Duration) time.Duration {
	c := p.cfg()
	if c.jitter.Kind == 0 { // no jitter
		return p.delay(n)
	}
	var u uint64
	if c.random != nil {
		u = c.random()
	} else {
		u = rand.Uint64()
	}
	return c.jitter.Apply(p.delay(n), prev, p.delay(1), c.cap, u)
}

// Retryable reports whether the policy retries err: what the function given
// to [Policy.WithRetryIf] says, or true when there is none. Package retry
// asks it after handling retry.Permanent.
func (p Policy) Retryable(err error) bool {
	c := p.cfg()
	return c.retryIf == nil || c.retryIf(err)
}

// String describes the policy in the syntax [Policy.UnmarshalText] reads,
// for example "exponential 10s x2 cap 5m0s" or
// "constant 1s attempts 5 elapsed 1m0s jitter full". It leaves out the
// settings that have no words: a clock, a retry predicate, a random source,
// a guard, hedging and a custom schedule's function.
func (p Policy) String() string {
	c := p.cfg()
	if c.kind == unset {
		return "unset"
	}
	var b strings.Builder
	switch c.kind {
	case exponential:
		fmt.Fprintf(&b, "exponential %v x%s", c.base, formatFloat(c.factor))
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
	if j := c.jitter; j.Kind != 0 || j.Fraction != 0 {
		fmt.Fprintf(&b, " jitter %s", jitterName(j.Kind))
		if j.Fraction != 0 || j.Kind == backoff.Proportional || j.Kind == backoff.Symmetric {
			fmt.Fprintf(&b, " %s", formatFloat(j.Fraction))
		}
	}
	if c.attemptTime != 0 {
		fmt.Fprintf(&b, " attempt-timeout %v", c.attemptTime)
	}
	if c.maxHint != defaultMaxHint {
		fmt.Fprintf(&b, " max-hint %v", c.maxHint)
	}
	if r := c.reset; r != resetOnSuccess {
		b.WriteString(" reset")
		if r == (ResetRule{}) {
			b.WriteString(" none")
		}
		if r.OnSuccess {
			b.WriteString(" success")
		}
		if r.AfterStableRun != 0 {
			fmt.Fprintf(&b, " stable %v", r.AfterStableRun)
		}
		if r.AfterIdle != 0 {
			fmt.Fprintf(&b, " idle %v", r.AfterIdle)
		}
	}
	return b.String()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// seal works out what Validate reports and whether calls are simple, once per value.
func (c *config) seal() {
	c.schedOK = !nilness.Of(c.sched)
	c.err = c.validate()
	c.shifts, c.ceiling = 0, 0
	if c.err == nil && c.kind == constant {
		c.shifts, c.ceiling = 1, c.base // base << 0, then base again
	}
	if c.err == nil && c.kind == exponential && c.factor == 2 {
		c.ceiling = time.Duration(math.MaxInt64)
		if c.cap > 0 {
			c.ceiling = c.cap
		}
		for c.shifts < 63 && c.base<<c.shifts>>c.shifts == c.base && c.base<<c.shifts <= c.ceiling {
			c.shifts++
		}
	}
	c.exact = 0
	if c.jitter.Kind == 0 { // no jitter
		c.exact = c.shifts
	}
}

// sealed returns c sealed, for package-level configs.
func sealed(c config) config {
	c.seal()
	return c
}

func (c *config) validate() error {
	var errs []error
	bad := func(setting, format string, args ...any) {
		errs = append(errs, &invalidError{setting: setting, reason: fmt.Sprintf(format, args...)})
	}
	k := c.kind
	if k == unset {
		return &invalidError{setting: "schedule", reason: "none set, as in the zero Policy; start from Default, Exponential, Constant, Custom or Parse (was a configuration field left unset?)"}
	}
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
		if !c.schedOK {
			bad("schedule", "nil")
		}
	}
	switch {
	case c.cap < 0:
		bad("cap", "%v is negative (0 means no cap)", c.cap)
	case c.cap > 0 && k != custom && c.cap < c.base:
		bad("cap", "%v is below the base delay %v", c.cap, c.base)
	}
	if c.clock != nil && nilness.Of(c.clock) {
		bad("clock", "a nil %T; WithClock(nil) means the real clock", c.clock)
	}
	if c.maxAttempts < 0 {
		bad("attempts", "%d is negative (attempts count the first call; 0 means no limit)", c.maxAttempts)
	}
	if c.maxElapsed < 0 {
		bad("elapsed", "%v is negative (0 means no limit)", c.maxElapsed)
	}
	j := c.jitter
	switch f := j.Fraction; {
	case j.Kind > backoff.Symmetric:
		bad("jitter", "unknown kind %d", j.Kind)
	case j.Kind == backoff.Proportional && (!(f >= 0) || math.IsInf(f, 0)):
		bad("jitter", "%s fraction %v is not a finite number ≥ 0", jitterName(j.Kind), f)
	case j.Kind == backoff.Symmetric && !(f >= 0 && f <= 1):
		bad("jitter", "%s fraction %v is not between 0 and 1", jitterName(j.Kind), f)
	case j.Kind != backoff.Proportional && j.Kind != backoff.Symmetric && f != 0:
		bad("jitter", "%s jitter takes no fraction, got %v", jitterName(j.Kind), f)
	}
	if c.attemptTime < 0 {
		bad("attempt-timeout", "%v is negative (0 means none)", c.attemptTime)
	}
	if c.maxHint <= 0 {
		bad("max-hint", "%v is not positive (the default is %v)", c.maxHint, defaultMaxHint)
	}
	if c.reset.AfterStableRun < 0 {
		bad("reset", "stable run %v is negative (0 turns it off)", c.reset.AfterStableRun)
	}
	if c.reset.AfterIdle < 0 {
		bad("reset", "idle %v is negative (0 turns it off)", c.reset.AfterIdle)
	}
	if err := guardErr(c.guard); err != nil {
		errs = append(errs, err)
	}
	if err := c.hedge.validate(); err != nil {
		errs = append(errs, err)
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
