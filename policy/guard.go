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
// back; stallInFlight is how many attempts it lets run meanwhile.
const (
	stallRun      = 16
	stallInFlight = 16
)

// probeEvery is how often a guard with no token left lets one retry through
// to learn whether the dependency is back.
const probeEvery = time.Second

// Guard admits retries while they pay off and holds them back while they
// would only add load. It keeps a stall or an overload from turning into a
// retry storm. It still lets retries ride out a blip, a partial failure or
// an outage that ends. Give one Guard to every policy that calls the same
// dependency ([Policy.WithGuard]).
//
// A retry may start while at least one whole token is left, or while its
// call is the only one in flight. Each attempt's outcome adds tokens or
// takes them, as the table below shows, with r the ratio given to NewGuard.
// The count never goes below zero or above the capacity.
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
//	a first attempt held back, waiting       nothing
//
// "Up to 9/10" means that a slow success adds r without lifting the tokens
// above nine tenths of the capacity (see [Slow]). A hedge takes its token as
// it starts. A hedge that wins then adds r, as any success does. A hedge
// that loses and is cancelled adds nothing, so its token stays spent. In
// retry.Loop, the run after a successful run is a first try.
//
// # Overload
//
// This is the one definition of overload, for the guard and for every
// package of retrykit. An attempt shows overload when any of these holds:
//
//   - The policy's attempt timeout cut it off (retry.ErrAttemptTimeout).
//   - Its error reports a timeout: the error, or one it wraps, has a Timeout
//     method that returns true. context.DeadlineExceeded and a network
//     timeout do.
//   - Its error carries a server's hint to wait (retry.After).
//
// Package retryhttp reports 429 Too Many Requests and 504 Gateway Timeout
// as timeouts. It turns a valid Retry-After header into a hint, on a 429, on
// a 5xx and on any other response it retries. So in retryhttp a 429, a 504,
// and a 5xx that carries Retry-After show overload. A 500, 502 or 503
// without Retry-After is a fast failure. Package retrygrpc turns a server's
// pushback into a hint, so a status that carries a pushback shows overload.
// Package retrykube counts every failed reconcile as a fast failure.
//
// Any other failed attempt is a fast failure. An attempt that the caller's
// own context cut off shows nothing and is not counted.
//
// # What the numbers mean
//
// For NewGuard(50, 1), the guard retryhttp.New gives each Transport:
//
//   - Retries that succeed never use up tokens, however many there are.
//   - First tries that fail fast use up the tokens only when more than two
//     in three fail. Each success adds r and each fast failure takes r/2,
//     whatever r is. So a burst of calls that all fail at once leaves no
//     token for their retries. A burst that mostly succeeds keeps them.
//   - First tries that show overload use up the tokens when more than half
//     of them do. Each takes 1 and each success adds 1. For another ratio r,
//     the share is more than one first try in 1 + 1/r.
//   - When attempts fail at random, retries keep going as long as about
//     half of all attempts fail, or fewer.
//   - A dependency that is down gets every first try, about 50 retries and
//     then one probe a second, however many calls wait. Its failing first
//     tries take tokens too, so it gets fewer than 50 retries when there
//     are many of them.
//
// # A call alone in flight
//
// A call that is alone in flight has its retries admitted whatever the
// tokens, as Envoy's minimum retry concurrency does. One call at a time
// cannot make a storm, because its retries take the place of its next
// call. Its outcomes still add or take tokens. A call is in flight from
// its start to its end, its waits included ([Guard.Start]).
//
// # New calls held back
//
// This section is the home of the rule that holds new calls back. While
// the dependency answers nothing but overload, at most 16 attempts run at
// once, and a new call's first attempt waits for its turn. This starts once
// the last 16 attempts in a row have shown overload, with no success or
// fast failure between them. Only attempts that are running take room. A
// call waiting between attempts does not, nor does a Loop between runs.
//
// A call held back waits as it would for a denied retry. It waits its next
// back-off delay and asks again, and each wait uses up an attempt. Its turn
// comes, first come first served, when a running attempt ends, or at once
// when the dependency answers (a success or a fast failure). Once a second,
// one call held back goes as the guard's probe, which it shares with
// retries, so attempts that never end cannot hold calls back for good. A
// call ends while held back only when its attempts, its time limit or its
// context's deadline come first. It then returns an error matching
// retry.ErrShed, and it never reached the dependency.
//
// So a pause shorter than the attempt timeout holds nothing back, because
// no attempt times out during it. A dependency that answers at once, even
// with overload such as a 429, has few attempts running and holds nothing
// back either. A stall lets 16 attempts at a time reach the dependency,
// which keeps its queue from filling with attempts whose callers will be
// gone by the time it serves them, while the callers who would wait keep
// their calls.
//
// # Probes and denied retries
//
// When no whole token is left, one retry a second still goes through, as a
// probe. Asking for it costs nothing, and its outcome counts as a retry's.
// A probe that succeeds adds r like any success, so the waiting calls'
// retries start again. A denied retry means "not now". Package retry waits
// the next back-off delay and asks again. The denied retry uses up the
// attempt it replaced. A call ends while denied only when it runs out of
// attempts or time. It then returns an error matching retry.ErrThrottled.
//
// A Guard is safe for concurrent use. It reads no clock: callers pass the
// time in. Its methods do not allocate, except Enter when it holds a call
// back. The zero Guard admits nothing but probes. Use NewGuard.
type Guard struct {
	tokens  atomic.Int64 // in millionths of a token, within [0, cap]
	probe   atomic.Int64 // the earliest time of the next probe, in Unix nanoseconds
	calls   atomic.Int64 // the calls in flight, from Start to Done
	running atomic.Int64 // the attempts running, from Enter or a retry's start to Leave
	stall   atomic.Int64 // the attempts in a row that showed overload, since the last answer
	line    line         // the first attempts waiting for their turn
	cap     int64        // capacity, in millionths
	refill  int64        // tokens a success adds, in millionths
	err     error
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
	// Failed: the attempt failed fast, as a refused connection or a 502
	// does. A failed retry takes a token. A failed first try takes half
	// the ratio.
	Failed
	// Overloaded: the attempt showed overload, as the [Guard]'s doc
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
}

// Start tells the guard that a call begins, and Done that it has ended.
// Between the two the call is in flight, its waits included: the guard
// admits the retries of a call alone in flight whatever the tokens. Call
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
// up to ten tokens, five for NewGuard(50, 1). The rest of the tokens stays
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

// Stalled reports whether the last 16 attempts in a row showed overload,
// with no success or fast failure between them. It is the state in which
// [Guard.Enter] holds first attempts back once 16 attempts are running. A nil *Guard
// is not stalled.
func (g *Guard) Stalled() bool {
	return g != nil && g.stall.Load() >= stallRun
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
