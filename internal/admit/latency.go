package admit

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// The buckets of the latency estimate: bucket 0 holds everything below
// 2^latencyMinExp ns (about 1µs); then each power of two up to
// 2^latencyMaxExp ns (about 37 minutes) is split into 2^latencySubBits
// buckets of equal width, so that a bucket's upper edge is at most 12.5 %
// above any duration in it; the last bucket holds everything longer.
const (
	latencySubBits = 3
	latencyMinExp  = 10
	latencyMaxExp  = 41
	latencyBuckets = 1 + (latencyMaxExp-latencyMinExp)<<latencySubBits
)

// latencyWindow is how many samples each of the two histograms holds: the
// estimate covers the last latencyWindow to 2 × latencyWindow samples.
const latencyWindow = 1000

// MaxQuantile is the largest quantile [Guard.Latency] estimates. An
// estimate needs ten samples above its quantile, and the histograms always
// hold a window of samples once they have filled one: ten above the 0.99
// quantile.
const MaxQuantile = 1 - 10.0/latencyWindow

// latency is a running estimate of the quantiles of durations. It keeps
// two histograms of latencyWindow samples each: the current one fills up,
// then replaces the previous one and starts empty, so the estimate follows
// a change within about latencyWindow samples. Its size is fixed, whatever
// the traffic.
type latency struct {
	mu     sync.Mutex
	counts [2][latencyBuckets]uint32
	n      [2]uint32 // samples in each histogram
	cur    int       // the histogram being filled
}

// Observe records the duration of a successful attempt of a hedged call,
// measured on the policy's clock. A negative one counts as zero. Package
// retry calls it for every successful attempt of a hedged call under the
// guard. The guard takes the memory for the estimate at the first Observe,
// so that guards that never hedge stay small. After that Observe does not
// allocate.
func (g *Guard) Observe(d time.Duration) {
	l := g.lat.Load()
	if l == nil {
		g.lat.CompareAndSwap(nil, new(latency))
		l = g.lat.Load()
	}
	b := latencyBucket(max(d, 0))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[l.cur][b]++
	l.n[l.cur]++
	if l.n[l.cur] >= latencyWindow {
		l.cur ^= 1
		l.counts[l.cur] = [latencyBuckets]uint32{}
		l.n[l.cur] = 0
	}
}

// Latency returns the estimate of quantile q, 0.95 for the p95, of the
// durations given to [Guard.Observe], and false when there is none yet. q
// is from 0 (excluded) to [MaxQuantile]; another q has no estimate. The doc
// of policy.Hedging states what the estimate covers, when it starts and how
// close it is. The estimate is the upper edge of the bucket that holds the
// quantile, so it is never below it. Latency does not allocate. A nil
// *Guard has no estimate.
func (g *Guard) Latency(q float64) (time.Duration, bool) {
	if g == nil || !(q > 0 && q <= MaxQuantile) {
		return 0, false
	}
	l := g.lat.Load()
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	total := l.n[0] + l.n[1]
	if float64(total) < math.Ceil(10/(1-q)-1e-9) {
		return 0, false
	}
	rank := uint32(math.Ceil(q * float64(total)))
	var seen uint32
	for b := range latencyBuckets {
		seen += l.counts[0][b] + l.counts[1][b]
		if seen >= rank {
			return latencyUpper(b), true
		}
	}
	return latencyUpper(latencyBuckets - 1), true
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
