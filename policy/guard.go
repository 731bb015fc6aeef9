package policy

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
)

// guardScale is how many units make one token: tokens are counted in
// millionths, so that a ratio such as 0.2 adds exactly and an atomic integer
// holds the count.
const guardScale = 1_000_000

// maxGuardTokens is the largest capacity NewGuard accepts.
const maxGuardTokens = 1_000_000

// Guard denies retries while failures dominate the calls to a dependency,
// which is what keeps a short stall from turning into a retry storm that
// outlives it. It is a token bucket that reacts to outcomes, not to volume,
// after gRPC's retry throttling: the bucket starts full; each failed attempt
// takes one token, each successful attempt puts back ratio tokens (never
// above the capacity), and a retry is allowed only while more than half the
// capacity is left.
//
// So a dependency that fails sporadically keeps its retries (with ratio 0.4,
// as long as well under 2 attempts in 7 fail: 5 successes put back what 2
// failures take), while one that fails everything stops being retried after
// capacity/2 failures, and again only once successes have refilled the
// bucket. When every attempt fails, a guard allows fewer than capacity/2
// retries in all, however many calls are made: that is its floor.
//
// Give one Guard to every policy that calls the same dependency
// ([Policy.WithGuard]); package retry tells it the outcome of every attempt
// and asks it before every retry. Errors the policy does not retry and
// attempts cut short by the caller's own context are no news about the
// dependency and are not counted. A Guard composes with a [Budget]: a retry
// must then pass both.
//
// A Guard reads no clock: it counts outcomes, so it needs no time and does
// not care in which order callers' clocks run. It is safe for concurrent use
// and its methods do not allocate. Its zero value allows no retry at all;
// use NewGuard.
type Guard struct {
	tokens atomic.Int64 // in millionths of a token, within [0, capacity]
	cap    int64        // capacity, in millionths
	refill int64        // tokens a success puts back, in millionths
	err    error
}

// NewGuard returns a full guard of the given capacity, in tokens, whose
// successes put back ratio tokens each (see [Guard] for the rule).
//
// NewGuard(10, 0.4) is the guard to reach for, for a dependency called a few
// times a second or more, and the one retryhttp.New gives each Transport: a
// stall then costs fewer than 5 retries before the guard closes, and a
// dependency that fails one attempt in ten keeps its retries (it drains
// about 0.11 tokens per call and refills 0.4). The ratio of 0.4 rather than
// gRPC's usual 0.1 is what keeps them (examples/storm measures both).
//
// A capacity that is not a number from 1 to 1,000,000, or a ratio that
// is not a number from 0.000001 to the capacity, makes every policy that uses
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

// success records a successful attempt: it puts back the guard's ratio of a
// token.
func (g *Guard) success() {
	for {
		t := g.tokens.Load()
		n := min(t+g.refill, g.cap) // t ≤ cap and refill ≤ cap: no overflow
		if n == t || g.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// failure records a failed attempt: it takes one token, down to none.
func (g *Guard) failure() {
	for {
		t := g.tokens.Load()
		n := max(t-guardScale, 0)
		if n == t || g.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// allowRetry reports whether a retry may be made now: whether more than half
// the guard's capacity is left. It takes nothing; the retry's own outcome is
// recorded when it is known.
func (g *Guard) allowRetry() bool {
	return g.tokens.Load()*2 > g.cap
}

// Tokens returns the tokens left, from 0 to the capacity: a gauge for
// metrics. Retries are allowed while it is above half the capacity. A nil
// *Guard, the guard of a policy that has none, has 0.
func (g *Guard) Tokens() float64 {
	if g == nil {
		return 0
	}
	return float64(g.tokens.Load()) / guardScale
}

// String describes the guard, for example "guard 10 tokens ratio 0.2"; a
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
