// Package admit holds the admission protocol of policy.Guard: the calls
// that the code running attempts makes to the guard, and the outcomes it
// records. It also holds the latency estimate that a guard keeps for
// hedging ([Guard.Latency]). Package retry and the integrations that run
// attempts themselves (retryhttp, retrygrpc, retrykube, retryriver,
// retryotel) convert the guard a policy carries with
// (*admit.Guard)(p.Guard()). The rules the guard applies are stated once,
// in the doc of policy.Guard.
//
// The package is internal to this repository. Its API is held compatible
// from one release to the next, because nested modules built at one
// release import it from the root module of the same release (see
// RELEASING.md).
package admit

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// guardScale is how many units make one token: tokens are counted in
// millionths, so that a ratio such as 0.4 adds exactly and an atomic integer
// holds the count.
const guardScale = 1_000_000

// maxGuardTokens is the largest capacity New accepts.
const maxGuardTokens = 1_000_000

// stallRun is how many attempts in a row must count as overload, with no
// success or fast failure between them, before the guard holds new calls
// back; stallInFlight is how many attempts it lets run meanwhile.
const (
	stallRun      = 16
	stallInFlight = 16
)

// probeEvery is how often a guard with no token left lets one retry through
// to learn whether the dependency is back.
const probeEvery = time.Second

// Guard is the state of a policy.Guard and its protocol. policy.Guard is
// defined as Guard, so the two pointer types convert into each other freely.
// A Guard is safe for concurrent use. It reads no clock: callers pass the
// time in. Its methods do not allocate, except Enter when it holds a call
// back and the first Observe. The zero Guard admits nothing but probes. Use
// New.
type Guard struct {
	tokens  atomic.Int64 // in millionths of a token, within [0, cap]
	probe   atomic.Int64 // the earliest time of the next probe, in Unix nanoseconds
	calls   atomic.Int64 // the calls in flight, from Start to Done
	running atomic.Int64 // the attempts running, from Enter or a retry's start to Leave
	stall   atomic.Int64 // the attempts in a row that counted as overload, since the last answer
	line    line         // the first attempts waiting for their turn
	denied  line         // the denied retries waiting their back-off (denied.go)
	cap     int64        // capacity, in millionths
	refill  int64        // tokens a success adds, in millionths
	err     error

	lat atomic.Pointer[latency] // the latency estimate for hedging; nil until the first Observe
}

// New returns a full guard of the given capacity, in tokens, to which every
// success adds ratio tokens. A capacity that is not a number from 1 to
// 1,000,000, or a ratio that is not a number from 0.000001 to the capacity,
// gives a guard whose Err says why, and which policy.Policy.Validate
// reports.
func New(tokens, ratio float64) *Guard {
	g := &Guard{}
	switch {
	case !(tokens >= 1 && tokens <= maxGuardTokens):
		g.err = fmt.Errorf("capacity %v is not a number of tokens from 1 to %d", tokens, maxGuardTokens)
	case !(ratio*guardScale >= 1 && ratio <= tokens):
		g.err = fmt.Errorf("ratio %v is not a number from 0.000001 to the capacity %v", ratio, tokens)
	default:
		g.cap = int64(math.Round(tokens * guardScale))
		g.refill = int64(math.Round(ratio * guardScale))
		g.tokens.Store(g.cap)
	}
	return g
}

// Err says why New refused the guard's settings, or is nil for a valid
// guard. A nil *Guard is valid.
func (g *Guard) Err() error {
	if g == nil {
		return nil
	}
	return g.err
}

// Outcome is what an attempt said about the dependency, for [Guard.Record].
type Outcome int

const (
	// Succeeded: the dependency served the attempt, which adds the ratio.
	Succeeded Outcome = iota
	// Failed: the attempt failed fast, as a refused connection or a 502
	// does. A failed retry takes a token. A failed first try takes half
	// the ratio.
	Failed
	// Overloaded: the attempt counted as overload, as the doc of policy.Guard
	// defines it under "Overload". An overloaded first try takes a token.
	// An overloaded retry takes two.
	Overloaded
	// Slow: the attempt succeeded, but only after the hedge delay. It adds
	// the ratio, but never lifts the tokens above nine tenths of the
	// capacity. So slow successes keep the retries going, and they cannot
	// let hedges start again (see [Guard.AllowHedge]).
	Slow
)

// Allow reports whether a retry may start at now. It may while a whole
// token is left, or while the call asking is the only one in flight
// ([Guard.Start]). Otherwise it may only as the one probe a second. Allow
// takes no token. The retry's outcome, recorded with Record(true, …), is
// what costs.
func (g *Guard) Allow(now time.Time) bool {
	return g.tokens.Load() >= guardScale || g.alone() || g.probed(now)
}

// Record tells the guard how an attempt ended. admitted is true for an
// attempt the guard admitted as a retry ([Guard.Allow]) or a hedge
// ([Guard.AllowHedge]), and false for a first try. Record each attempt
// once. An attempt that says nothing of the dependency need not be
// recorded. That is one the caller gave up on, one that failed for the
// caller's own mistake, and a hedge cancelled because another attempt won.
func (g *Guard) Record(admitted bool, o Outcome) {
	switch o {
	case Overloaded:
		g.stall.Add(1)
	case Succeeded, Slow, Failed: // an answer: the dependency is not stalled
		if g.stall.Load() != 0 { // a success reads the count, and writes it only after a stall
			g.stall.Store(0)
			if g.line.waiting.Load() > 0 {
				g.admitWaiting()
			}
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
	if (o == Succeeded || o == Slow) && g.denied.waiting.Load() > 0 {
		g.letDeniedGo()
	}
}

// Start tells the guard that a call begins, and Done that it has ended.
// Between the two the call is in flight, its waits included: the guard
// admits the retries of the only call in flight whatever the tokens. Call
// Done in a defer, so that a panic cannot leave the call counted. Package
// retry tells the guard of every call its policy guards. An integration
// that runs attempts itself and asks Allow for its retries should call
// Start and Done too, and [Guard.Enter] and [Guard.Leave] around each
// attempt.
func (g *Guard) Start() { g.calls.Add(1) }

// Done tells the guard that a call it was told of with Start has ended.
func (g *Guard) Done() { g.calls.Add(-1) }

// alone reports whether the call asking for a retry is the only call in
// flight.
func (g *Guard) alone() bool { return g.calls.Load() == 1 }

// AllowHedge reports whether a hedge may start beside a slow attempt, and
// takes its token if so. A hedge may start while the guard holds more than
// nine tenths of its capacity. It then takes one token, or what is left of
// one. It never starts as a probe. Unlike a retry, a hedge takes its token
// as it starts, because whether it was worth it is known late. A hedge
// that wins earns the ratio back, like any success. A hedge that loses
// keeps its token spent. So from a full guard, hedges that lose stop after
// a tenth of the capacity, rounded up to a whole number: one for a guard of
// up to ten tokens, five for policy.NewGuard(50, 1). The rest of the tokens stays
// for retries. Only successes faster than the hedge delay lift the guard
// above the line again (see [Slow]). Overload keeps it below.
func (g *Guard) AllowHedge() bool {
	for {
		t := g.tokens.Load()
		if t <= g.hedgeLine() {
			return false
		}
		if g.tokens.CompareAndSwap(t, max(t-guardScale, 0)) {
			return true
		}
	}
}

// hedgeLine is the line above which a hedge may start: nine tenths of the
// capacity. Hedges are extra load that only a healthy dependency should
// get; the tenth above the line is theirs to spend, the rest is the
// retries'.
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

// Stalled reports whether the last 16 attempts in a row counted as overload,
// with no success or fast failure between them. It is the state in which
// [Guard.Enter] holds first attempts back once 16 attempts are running. A nil *Guard
// is not stalled.
func (g *Guard) Stalled() bool {
	return g != nil && g.stall.Load() >= stallRun
}
