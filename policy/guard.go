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

// probeEvery is how often a guard with no token left lets one retry through
// to learn whether the dependency is back.
const probeEvery = time.Second

// Guard admits retries while they pay off and holds them back while they
// would only add load, so that a stall or an overload does not turn into a
// retry storm, while a blip, a partial failure or an outage that ends are
// still ridden out. Give one Guard to every policy that calls the same
// dependency ([Policy.WithGuard]).
//
// The rule: a retry takes a token, and may start only while one is left.
// A retry that succeeds gives its token back, so retries that work cost
// nothing, however many there are. Every success, first tries included,
// adds ratio tokens, up to the capacity. An attempt that shows overload (it
// timed out, or the dependency asked for a pause) takes a token, first
// tries included. A fast failure of a first try takes nothing: it is not
// load the retries made.
//
// When no token is left, one retry a second still goes through, as a probe:
// when it succeeds its token comes back and the retries of every waiting
// call follow. A denied retry means "not now": package retry waits the
// back-off delay and asks again, and only a call that runs out of attempts
// or time while denied ends, with retry.ErrThrottled.
//
// So a dependency that is down gets the first tries, capacity retries and
// one probe a second, however many calls wait; one that fails part of its
// attempts at random keeps its retries as long as ratio × successes make up
// for the retries that fail (NewGuard(10, 0.5) holds at half the attempts
// failing); and an overloaded one sees its retries stop while more than one
// attempt in 1 + 1/ratio times out.
//
// A Guard is safe for concurrent use, its methods do not allocate, and it
// reads no clock: the time is passed in. Its zero value admits nothing but
// probes; use NewGuard.
type Guard struct {
	tokens atomic.Int64 // in millionths of a token, within [0, cap]
	probe  atomic.Int64 // the earliest time of the next probe, in Unix nanoseconds
	cap    int64        // capacity, in millionths
	refill int64        // tokens a success adds, in millionths
	err    error
}

// NewGuard returns a full guard of the given capacity, in tokens, to which
// every success adds ratio tokens (see [Guard] for the rule).
//
// NewGuard(10, 0.5) is the guard to reach for, and the one retryhttp.New
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
	// Succeeded: the dependency served the attempt.
	Succeeded Outcome = iota
	// Failed: the attempt failed fast (a refused connection, a 502).
	Failed
	// Overloaded: the attempt timed out, or the dependency asked for a
	// pause (a 429, or a 503 with Retry-After).
	Overloaded
	// Slow: the attempt succeeded, but only after the hedge delay. A
	// retry's token comes back, and the ratio is added, but never beyond
	// half the capacity: slow successes keep the retries going, and cannot
	// open the guard to hedges again (see [Guard.AllowHedge]).
	Slow
)

// Allow reports whether a retry may start at now. When it may, the retry
// holds a token until its outcome is recorded with Record(true, …). When no
// token is left, Allow admits one retry a second as a probe.
func (g *Guard) Allow(now time.Time) bool {
	if g.take() {
		return true
	}
	next, t := g.probe.Load(), now.UnixNano()
	return t >= next && g.probe.CompareAndSwap(next, t+int64(probeEvery))
}

// Record tells the guard how an attempt ended: retry says whether it was a
// retry that [Guard.Allow] admitted. Record each attempt once; an attempt
// that says nothing of the dependency (the caller gave up on it, or it
// failed for the caller's own mistake) need not be recorded.
func (g *Guard) Record(retry bool, o Outcome) {
	if retry && (o == Succeeded || o == Slow) {
		g.give(guardScale, g.cap)
	}
	switch o {
	case Succeeded:
		g.give(g.refill, g.cap)
	case Slow:
		g.give(g.refill, g.cap/2)
	case Overloaded:
		g.drain()
	}
}

// AllowHedge reports whether a hedge may start beside a slow attempt: only
// while more than half the capacity is left, and never as a probe. When it
// may, the hedge takes a token, given back only if the hedge is the attempt
// that succeeds (Record(true, Succeeded)): hedges that lose to the attempt
// they hedged over spend the guard down to half and then stop, leaving the
// other half to retries; only successes faster than the hedge delay lift it
// above half again.
func (g *Guard) AllowHedge() bool {
	for {
		t := g.tokens.Load()
		if t-guardScale < g.cap/2 {
			return false
		}
		if g.tokens.CompareAndSwap(t, t-guardScale) {
			return true
		}
	}
}

// take takes one token if one is left.
func (g *Guard) take() bool {
	for {
		t := g.tokens.Load()
		if t < guardScale {
			return false
		}
		if g.tokens.CompareAndSwap(t, t-guardScale) {
			return true
		}
	}
}

// give adds n millionths of a token, up to ceiling; tokens already above
// it stay.
func (g *Guard) give(n, ceiling int64) {
	for {
		t := g.tokens.Load()
		m := max(min(t+n, ceiling), t) // t ≤ cap and n ≤ cap: no overflow
		if m == t || g.tokens.CompareAndSwap(t, m) {
			return
		}
	}
}

// drain takes one token, or what is left of one.
func (g *Guard) drain() {
	for {
		t := g.tokens.Load()
		m := max(t-guardScale, 0)
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
