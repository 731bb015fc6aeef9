package policy

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/admit"
)

// maxHedgeInFlight is the largest Hedging.MaxInFlight a policy accepts.
const maxHedgeInFlight = 10

// Hedging says when a call starts another attempt beside one that is slow to
// return. It is for the slow tail, not for failures, as in "The Tail at
// Scale" (Dean and Barroso, 2013). Package retry starts the first attempt at
// once. When it has not returned after the hedge delay, retry starts another
// beside it, and so on up to MaxInFlight attempts side by side. The first
// success wins, and the others are cancelled through their contexts.
//
// Every hedge counts against the policy's attempt limit. A policy with a
// guard starts a hedge only when the [Guard] admits it: while the
// guard holds more than nine tenths of its capacity. Each hedge takes a
// token from the guard as it starts. So hedges that never win stop, and
// hedging cannot feed an overload. Hedge only operations that are safe to run twice at once, such
// as reads and idempotent writes.
//
// The zero Hedging hedges nothing. A Hedging is a plain value.
type Hedging struct {
	// Delay is how long an attempt runs before another is started beside
	// it. With Quantile set, it is the delay used until the guard has an
	// estimate, and 0 then means no hedge before that.
	Delay time.Duration
	// Quantile, when set, gives the delay: the guard's running estimate of
	// that quantile of the latency of successful attempts, 0.95 for the
	// p95. It is from 0 (excluded) to 0.99, and 0 means a fixed Delay.
	//
	// The estimate lives in the guard, so the policies that share a guard
	// share it. The guard learns from every successful attempt of a hedged
	// call under it: those of retry.Hedge, retry.HedgeValue and the hedged
	// requests of a retryhttp.Transport. The estimate covers the last 1,000
	// to 2,000 of them. The guard has no estimate until ten successes were
	// slower than the quantile. For the p95 that takes about 200 successes,
	// and for the p99 about 1,000. The estimate is never below the
	// true quantile and at most 12.5 % above it, between about 1µs and 36
	// minutes. It takes the guard about 2 KB, from its first hedged call.
	//
	// So Quantile needs a guard ([Policy.WithGuard]). retry.Hedge refuses a
	// policy with a Quantile and no guard. retryhttp.New gives such a
	// policy the Transport's own guard, as it does any policy without one.
	Quantile float64
	// MaxInFlight is the most attempts that run side by side, the first
	// included. It is from 2 to 10, and 0 means 2, that is one hedge. The
	// attempts of one round start one hedge delay apart. One that fails is
	// not replaced within the round.
	MaxInFlight int
}

// enabled reports whether h hedges at all: it has a Delay or a Quantile.
func (h Hedging) enabled() bool { return h.Delay > 0 || h.Quantile != 0 }

func (h Hedging) validate() error {
	switch {
	case h == Hedging{}:
		return nil
	case h.Delay < 0:
		return &invalidError{setting: "hedge", reason: fmt.Sprintf("delay %v is negative", h.Delay)}
	case !h.enabled():
		return &invalidError{setting: "hedge", reason: "neither a delay nor a quantile says when to hedge"}
	case h.Quantile != 0 && !(h.Quantile > 0 && h.Quantile <= admit.MaxQuantile):
		return &invalidError{setting: "hedge", reason: fmt.Sprintf("quantile %v is not a number above 0 and at most %v", h.Quantile, admit.MaxQuantile)}
	case h.MaxInFlight != 0 && (h.MaxInFlight < 2 || h.MaxInFlight > maxHedgeInFlight):
		return &invalidError{setting: "hedge", reason: fmt.Sprintf("%d attempts in flight is not a number from 2 to %d (0 means 2)", h.MaxInFlight, maxHedgeInFlight)}
	}
	return nil
}

// WithHedging returns a copy that hedges by h, as [Hedging] says.
// WithHedging(Hedging{}) removes hedging. These make the policy invalid: a
// negative Delay, a Quantile outside 0 to 0.99, a MaxInFlight other than 0
// or 2 to 10, and a non-zero Hedging with neither Delay nor Quantile.
func (p Policy) WithHedging(h Hedging) Policy {
	return p.with(func(c *config) { c.hedge = h })
}
