package policy

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
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
// The zero Hedging hedges nothing. A Hedging is a plain value. The
// [Latency] it may point to is shared, and is safe for concurrent use.
type Hedging struct {
	// Delay is how long an attempt runs before another is started beside
	// it. With Latency set, it is the delay used until Latency has an
	// estimate, and 0 then means no hedge before that.
	Delay time.Duration
	// Latency, when set, gives the delay: its running estimate of a
	// percentile of the latency of successful attempts, shared by every
	// policy given the same Latency.
	Latency *Latency
	// MaxInFlight is the most attempts that run side by side, the first
	// included. It is from 2 to 10, and 0 means 2, that is one hedge. The
	// attempts of one round start one hedge delay apart. One that fails is
	// not replaced within the round.
	MaxInFlight int
}

// enabled reports whether h hedges at all: it has a Delay or a Latency.
func (h Hedging) enabled() bool { return h.Delay > 0 || h.Latency != nil }

func (h Hedging) validate() error {
	switch {
	case h == Hedging{}:
		return nil
	case h.Delay < 0:
		return &invalidError{setting: "hedge", reason: fmt.Sprintf("delay %v is negative", h.Delay)}
	case !h.enabled():
		return &invalidError{setting: "hedge", reason: "neither a delay nor a latency estimate says when to hedge"}
	case h.MaxInFlight != 0 && (h.MaxInFlight < 2 || h.MaxInFlight > maxHedgeInFlight):
		return &invalidError{setting: "hedge", reason: fmt.Sprintf("%d attempts in flight is not a number from 2 to %d (0 means 2)", h.MaxInFlight, maxHedgeInFlight)}
	case h.Latency != nil && h.Latency.err != nil:
		return h.Latency.err
	}
	return nil
}

// WithHedging returns a copy that hedges by h, as [Hedging] says.
// WithHedging(Hedging{}) removes hedging. These make the policy invalid: a
// negative Delay, a MaxInFlight other than 0 or 2 to 10, a non-zero Hedging
// with neither Delay nor Latency, and an invalid Latency.
func (p Policy) WithHedging(h Hedging) Policy {
	return p.with(func(c *config) { c.hedge = h })
}

// The buckets of a Latency: bucket 0 holds everything below 2^latencyMinExp
// ns (about 1µs); then each power of two up to 2^latencyMaxExp ns (about 37
// minutes) is split into 2^latencySubBits buckets of equal width, so that a
// bucket's upper edge is at most 12.5 % above any duration in it; the last
// bucket holds everything longer.
const (
	latencySubBits = 3
	latencyMinExp  = 10
	latencyMaxExp  = 41
	latencyBuckets = 1 + (latencyMaxExp-latencyMinExp)<<latencySubBits

	// latencyRefresh is how many samples pass between two estimates.
	latencyRefresh = 16
)

// Latency is a running estimate of a percentile of durations, made for a
// hedge delay (see [Hedging]). Package retry gives it the latency of every
// successful attempt of a hedged call, measured on the policy's clock.
//
// Give one Latency to every policy that calls the same dependency, as with a
// [Guard]. A Latency is safe for concurrent use, and its methods do not
// allocate. It reads no clock: durations are passed in. The zero Latency is
// not usable: call [NewLatency].
//
// The estimate covers the last window to 2 × window samples. A Latency keeps
// two histograms of window samples each. The current one fills up, then
// replaces the previous one and starts empty. So the estimate follows a
// change within about window samples. A Latency takes about 2.3 KB in all,
// whatever the traffic and the window.
//
// The estimate is the upper edge of a bucket on a logarithmic scale. For a
// percentile between about 1µs and 36 minutes, it is never below the true
// percentile of the samples and at most 12.5 % above it. A shorter
// percentile is estimated as 1.024µs, and a longer one as 36m39s. The
// estimate is worked out anew every 16 samples. There is none until enough
// samples have come for ten of them to lie above the percentile.
type Latency struct {
	quantile float64
	window   uint32
	warm     uint32 // samples needed before the first estimate
	err      error

	estimate atomic.Int64 // ns; 0: none yet

	mu     sync.Mutex
	counts [2][latencyBuckets]uint32
	n      [2]uint32 // samples in each histogram
	cur    int       // the histogram being filled
	fresh  int       // samples since the last estimate
}

// NewLatency returns an estimator of the given quantile, 0.95 for the p95,
// over the last window to 2 × window samples. A window of 1,000 suits most
// uses: the estimate then covers the last 1,000 to 2,000 successful
// attempts.
//
// The quantile must lie strictly between 0 and 1. The window must be large
// enough to hold ten samples above the percentile, that is at least
// 10 / (1 − quantile), 200 for the p95. It must be at most 10,000,000. Any
// other value makes every policy that uses the Latency invalid.
func NewLatency(quantile float64, window int) *Latency {
	l := &Latency{quantile: quantile}
	if !(quantile > 0 && quantile < 1) {
		l.err = &invalidError{setting: "hedge", reason: fmt.Sprintf("latency quantile %v is not a number strictly between 0 and 1", quantile)}
		return l
	}
	warm := math.Ceil(10/(1-quantile) - 1e-9)
	if !(float64(window) >= warm && window <= 10_000_000) {
		l.err = &invalidError{setting: "hedge", reason: fmt.Sprintf("latency window %d is not from %v (ten samples above the %v quantile) to 10000000", window, warm, quantile)}
		return l
	}
	l.window, l.warm = uint32(window), uint32(warm)
	return l
}

// latencyBucket returns the bucket of d.
func latencyBucket(d time.Duration) int {
	if d < 1<<latencyMinExp {
		return 0
	}
	e := bits.Len64(uint64(d)) - 1 // d is in [2^e, 2^(e+1))
	if e >= latencyMaxExp {
		return latencyBuckets - 1
	}
	sub := int(uint64(d)>>(e-latencySubBits)) & (1<<latencySubBits - 1)
	return 1 + (e-latencyMinExp)<<latencySubBits + sub
}

// latencyUpper returns the upper edge of bucket b.
func latencyUpper(b int) time.Duration {
	if b == 0 {
		return 1 << latencyMinExp
	}
	if b == latencyBuckets-1 {
		return 1 << latencyMaxExp
	}
	e := (b-1)>>latencySubBits + latencyMinExp
	sub := (b - 1) & (1<<latencySubBits - 1)
	return 1<<e + time.Duration(sub+1)<<(e-latencySubBits)
}

// Observe records the latency of one successful attempt. A negative one
// counts as zero. Package retry calls it for every successful attempt of a
// hedged call, and a loop of one's own may call it too. An invalid Latency
// records nothing.
func (l *Latency) Observe(d time.Duration) {
	if l.err != nil || l.window == 0 {
		return
	}
	b := latencyBucket(max(d, 0))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[l.cur][b]++
	l.n[l.cur]++
	if l.n[l.cur] >= l.window {
		l.cur ^= 1
		l.counts[l.cur] = [latencyBuckets]uint32{}
		l.n[l.cur] = 0
	}
	l.fresh++
	total := l.n[0] + l.n[1]
	if total >= l.warm && (l.fresh >= latencyRefresh || l.estimate.Load() == 0) {
		l.fresh = 0
		l.estimate.Store(int64(l.quantileLocked(total)))
	}
}

// quantileLocked returns the upper edge of the bucket that holds the
// percentile of both histograms; l.mu is held and total > 0.
func (l *Latency) quantileLocked(total uint32) time.Duration {
	rank := uint32(math.Ceil(l.quantile * float64(total)))
	var seen uint32
	for b := range latencyBuckets {
		seen += l.counts[0][b] + l.counts[1][b]
		if seen >= rank {
			return latencyUpper(b)
		}
	}
	return latencyUpper(latencyBuckets - 1)
}

// Estimate returns the current estimate of the percentile, and false when
// there is none yet.
func (l *Latency) Estimate() (time.Duration, bool) {
	d := time.Duration(l.estimate.Load())
	return d, d > 0
}
