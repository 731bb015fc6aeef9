package policy

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// guardScale is how many units make one token: tokens are counted in
// millionths, so that a ratio such as 0.4 adds exactly and an atomic integer
// holds the count.
const guardScale = 1_000_000

// maxGuardTokens is the largest capacity NewGuard accepts.
const maxGuardTokens = 1_000_000

// stallRun is how many attempts in a row must show overload, with no
// success or fast failure between them, before the guard holds new calls
// back; stallInFlight is how many calls it lets be in flight meanwhile.
const (
	stallRun      = 16
	stallInFlight = 16
)

// probeEvery is how often a guard with no token left lets one retry through
// to learn whether the dependency is back.
const probeEvery = time.Second

// Guard admits retries while they pay off and holds them back while they
// would only add load, so that a stall or an overload does not turn into a
// retry storm, while a blip, a partial failure or an outage that ends are
// still ridden out. Give one Guard to every policy that calls the same
// dependency ([Policy.WithGuard]).
//
// The rule: a retry may start while a whole token is left, or while its
// call is the only one in flight. What an attempt did adds tokens or takes
// them, never below zero and never above the capacity. With r the ratio
// given to NewGuard:
//
//	what happened                            first try       retry or hedge
//	success                                  +r              +r
//	success only after the hedge delay       +r up to 9/10   +r up to 9/10
//	failure, fast (refused, reset, a 502)    -r/2            -1
//	failure that shows overload              -1              -2
//	a Permanent error, one RetryIf rejects   nothing         nothing
//	cut short by the caller's context        nothing         nothing
//	asking for a retry, admitted or denied                   nothing
//	starting a hedge                                         -1
//	a call held back before its first try    nothing
//
// An attempt shows overload when its own timeout cut it off, when its error
// says it is a timeout (a Timeout method that returns true, as
// context.DeadlineExceeded has), or when the dependency asked for a pause
// (retry.After; in retryhttp a 429, a 504, or a 5xx with Retry-After).
// "9/10" is nine tenths of the capacity: a slow success adds nothing above
// it (see [Slow]). A hedge takes its token as it starts; one that wins then
// adds r as any success does, and one that loses and is cancelled adds
// nothing, so its token stays spent. A probe (below) costs nothing to ask,
// and its outcome counts as a retry's. In retry.Loop, the run after a run
// that succeeded is a first try.
//
// So retries that succeed cost nothing, however many there are, and first
// tries close the guard only when more than two in three fail: a burst of
// calls that all fail at once leaves no token for their retries, while a
// burst that mostly succeeds keeps them. An overloaded dependency sees its
// retries stop while more than one first try in 1 + 1/r times out.
//
// One call in flight at a time cannot make a storm: its retries take the
// place of its next call. So a call that is alone in flight has its
// retries admitted whatever the tokens, as Envoy's minimum retry
// concurrency does. Its outcomes still add or take tokens. The guard
// counts the calls in flight that package retry tells it of
// ([Guard.Start]).
//
// While the dependency answers nothing but overload, new calls are held
// back too, before their first attempt. Once the last 16 attempts in a row
// have shown overload, with no success or fast failure between them, at
// most 16 calls may be in flight, and a call over them fails at once
// without reaching the dependency ([Guard.Start], retry.ErrShed). The first
// success or fast failure lets new calls through again. So a pause shorter
// than the attempt timeout holds nothing back, as nothing times out during
// it. A stall does, from its first timeouts on, so that the dependency's
// queue stops growing with attempts their callers will have given up on by
// the time it serves them. A dependency that fails fast is never held back.
//
// When no token is left, one retry a second still goes through, as a probe:
// when it succeeds, it adds r like any success, and the retries of every
// waiting call follow. A denied retry means "not now": package retry waits
// the back-off delay and asks again, and only a call that runs out of
// attempts or time while denied ends, with retry.ErrThrottled.
//
// So a dependency that is down gets the first tries, about capacity
// retries (fewer when its first tries fail too) and one probe a second,
// however many calls wait, except that a caller with one call in flight
// makes all of its retries; one that fails part of its attempts at random
// keeps its retries as long as the ratio of its successes makes up for
// what failures take (NewGuard(50, 1): up to about half its attempts
// failing).
//
// A Guard is safe for concurrent use, its methods do not allocate (except
// Start, to say why it holds a call back), and it reads no clock: the time
// is passed in. Its zero value admits nothing but probes; use NewGuard.
type Guard struct {
	tokens atomic.Int64 // in millionths of a token, within [0, cap]
	probe  atomic.Int64 // the earliest time of the next probe, in Unix nanoseconds
	flight atomic.Int64 // the calls in flight, from Start to Done
	stall  atomic.Int64 // the attempts in a row that showed overload, since the last answer
	cap    int64        // capacity, in millionths
	refill int64        // tokens a success adds, in millionths
	err    error
}

// NewGuard returns a full guard of the given capacity, in tokens, to which
// every success adds ratio tokens (see [Guard] for the rule).
//
// NewGuard(50, 1) is the guard to reach for, and the one retryhttp.New
// gives each Transport.
//
// A capacity that is not a number from 1 to 1,000,000, or a ratio that is
// not a number from 0.000001 to the capacity, makes every policy that uses
// the guard invalid.
func NewGuard(tokens, ratio float64) *Guard {
	g := &Guard{}
	switch {
	case !(tokens >= 1 && tokens <= maxGuardTokens):
		g.err = &invalidError{setting: "guard", reason: fmt.Sprintf("capacity %v is not a number of tokens from 1 to %d", tokens, maxGuardTokens)}
	case !(ratio*guardScale >= 1 && ratio <= tokens):
		g.err = &invalidError{setting: "guard", reason: fmt.Sprintf("ratio %v is not a number from 0.000001 to the capacity %v", ratio, tokens)}
	default:
		g.cap = int64(math.Round(tokens * guardScale))
		g.refill = int64(math.Round(ratio * guardScale))
		g.tokens.Store(g.cap)
	}
	return g
}

// Outcome is what an attempt said about the dependency, for [Guard.Record].
type Outcome int

const (
	// Succeeded: the dependency served the attempt, which adds the ratio.
	Succeeded Outcome = iota
	// Failed: the attempt failed fast (a refused connection, a 502): a
	// retry's costs a token, a first try's half the ratio.
	Failed
	// Overloaded: the attempt timed out, or the dependency asked for a
	// pause (a 429, or a 503 with Retry-After): a first try's costs a
	// token, a retry's two.
	Overloaded
	// Slow: the attempt succeeded, but only after the hedge delay. The
	// ratio is added, but never beyond nine tenths of the capacity: slow
	// successes keep the retries going, and cannot open the guard to hedges
	// again (see [Guard.AllowHedge]).
	Slow
)

// Allow reports whether a retry may start at now: while a whole token is
// left, while the call asking is the only one in flight ([Guard.Start]),
// and otherwise as the one probe a second. It takes nothing: the retry's
// outcome, recorded with Record(true, …), is what costs.
func (g *Guard) Allow(now time.Time) bool {
	if g.tokens.Load() >= guardScale || g.alone() {
		return true
	}
	next, t := g.probe.Load(), now.UnixNano()
	return t >= next && g.probe.CompareAndSwap(next, t+int64(probeEvery))
}

// Record tells the guard how an attempt ended. admitted says whether the
// guard admitted the attempt, as a retry ([Guard.Allow]) or a hedge
// ([Guard.AllowHedge]), rather than it being a first try. Record each attempt once; an attempt that says
// nothing of the dependency (the caller gave up on it, or it failed for the
// caller's own mistake, or it was a hedge cancelled because another attempt
// won) need not be recorded.
func (g *Guard) Record(admitted bool, o Outcome) {
	switch o {
	case Overloaded:
		g.stall.Add(1)
	case Succeeded, Slow, Failed: // an answer: the dependency is not stalled
		if g.stall.Load() != 0 { // a success reads the count, and writes it only after a stall
			g.stall.Store(0)
		}
	}
	switch {
	case o == Succeeded:
		g.add(g.refill, g.cap)
	case o == Slow:
		g.add(g.refill, g.hedgeLine())
	case o == Overloaded && admitted:
		g.add(-2*guardScale, 0)
	case o == Overloaded, o == Failed && admitted:
		g.add(-guardScale, 0)
	case o == Failed:
		g.add(-g.refill/2, 0)
	}
}

// Start tells the guard that a call is about to make its first attempt,
// and returns nil when it may. It returns an error, which says why, when
// the guard holds new calls back: the last 16 attempts in a row showed
// overload, with no success or fast failure between them, and 16 calls are
// in flight already. Either way the call is in flight from then until
// [Guard.Done], its waits included: call Done once it ends, at once for a
// call held back.
//
// Package retry tells the guard of every call its policy guards, and
// returns retry.ErrShed for one held back (a Loop is never held back). An
// integration that runs attempts itself and asks Allow for its retries
// tells it too: Allow takes the caller asking for one of the calls in
// flight, and a call alone in flight keeps its retries.
//
// Start reads no clock and does not allocate, except to say why it holds a
// call back.
func (g *Guard) Start() error {
	n := g.flight.Add(1)
	if n <= stallInFlight {
		return nil
	}
	if run := g.stall.Load(); run >= stallRun {
		return fmt.Errorf("policy: guard: the last %d attempts showed overload and none was answered, with %d calls in flight", run, n-1)
	}
	return nil
}

// Done tells the guard that a call it was told of with Start has ended.
func (g *Guard) Done() { g.flight.Add(-1) }

// alone reports whether the call asking for a retry is the only call in
// flight.
func (g *Guard) alone() bool { return g.flight.Load() == 1 }

// AllowHedge reports whether a hedge may start beside a slow attempt: only
// while nine tenths of the capacity would be left, and never as a probe.
// Unlike a retry, a hedge takes its token as it starts, since whether it
// was worth it is known late: a hedge that wins earns the ratio back like
// any success, one that loses keeps the token spent. Hedges that lose spend
// the guard down to nine tenths and then stop, leaving the rest to
// retries; only successes faster than the hedge delay lift it above that
// line again (see [Slow]), and overload (timeouts) keeps it below.
func (g *Guard) AllowHedge() bool {
	for {
		t := g.tokens.Load()
		if t-guardScale < g.hedgeLine() {
			return false
		}
		if g.tokens.CompareAndSwap(t, t-guardScale) {
			return true
		}
	}
}

// hedgeLine is the tokens a hedge must leave: nine tenths of the capacity.
// Hedges are extra load that only a healthy dependency should get; the
// tenth above the line is theirs to spend, the rest is the retries'.
func (g *Guard) hedgeLine() int64 { return g.cap / 10 * 9 }

// add adds n millionths of a token, staying within [0, ceiling]; tokens
// already above ceiling stay.
func (g *Guard) add(n, ceiling int64) {
	for {
		t := g.tokens.Load()
		m := max(t+n, 0)
		if n > 0 {
			m = max(min(m, ceiling), t) // t ≤ cap and n ≤ cap: no overflow
		}
		if m == t || g.tokens.CompareAndSwap(t, m) {
			return
		}
	}
}

// Tokens returns the tokens left, from 0 to the capacity: a gauge for
// metrics. A nil *Guard, the guard of a policy that has none, has 0.
func (g *Guard) Tokens() float64 {
	if g == nil {
		return 0
	}
	return float64(g.tokens.Load()) / guardScale
}

// String describes the guard, for example "guard 10 tokens ratio 0.5"; a
// nil *Guard is "no guard".
func (g *Guard) String() string {
	if g == nil {
		return "no guard"
	}
	if g.err != nil {
		return "guard (invalid)"
	}
	return fmt.Sprintf("guard %s tokens ratio %s",
		strconv.FormatFloat(float64(g.cap)/guardScale, 'g', -1, 64),
		strconv.FormatFloat(float64(g.refill)/guardScale, 'g', -1, 64))
}
