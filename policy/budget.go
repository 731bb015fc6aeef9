package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// budgetWindow is how far back a Budget counts calls and retries, in
// seconds (Finagle's RetryBudget keeps its deposits for 10 s too).
const budgetWindow = 10

// Budget caps retries at a share of calls, across every call that uses it:
// over the last 10 seconds, retries may not exceed ratio × calls plus a floor
// of retries per second. Every call made with the budget counts (so calls
// refill it), each retry spends from it, and errors that are not retried
// spend nothing. When it is spent, retry.Do fails fast instead of waiting,
// with an error matching retry.ErrThrottled and the last error;
// while it lasts, the back-off works as usual.
//
// The SRE book's rule is NewBudget(0.1, 0); Finagle's default is
// NewBudget(0.2, 10).
//
// Time is passed in, so a Budget reads no clock. A Budget is safe for
// concurrent use and meant to be shared: give one to every policy that calls
// the same dependency. Its zero value allows no retry at all; use NewBudget.
type Budget struct {
	ratio float64
	floor float64
	err   error

	mu      sync.Mutex
	buckets [budgetWindow]budgetBucket
}

type budgetBucket struct {
	second         int64 // Unix second the counts belong to
	calls, retries int64
}

// NewBudget returns a budget that allows retries up to ratio × calls plus
// floor retries per second. A ratio or floor that is negative, NaN or
// infinite makes every policy that uses the budget invalid.
func NewBudget(ratio, floor float64) *Budget {
	b := &Budget{ratio: ratio, floor: floor}
	switch {
	case !(ratio >= 0) || math.IsInf(ratio, 0):
		b.err = &invalidError{setting: "budget", reason: fmt.Sprintf("ratio %v is not a finite number ≥ 0", ratio)}
	case !(floor >= 0) || math.IsInf(floor, 0):
		b.err = &invalidError{setting: "budget", reason: fmt.Sprintf("floor %v is not a finite number ≥ 0 retries per second", floor)}
	}
	return b
}

// call records one call at time now.
func (b *Budget) call(now time.Time) {
	b.mu.Lock()
	b.bucket(now).calls++
	b.mu.Unlock()
}

// tryRetry spends one retry at time now and reports true if the budget
// allows it; otherwise it spends nothing and reports false.
func (b *Budget) tryRetry(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.bucket(now)
	var calls, retries int64
	for _, bk := range b.buckets {
		if bk.second > cur.second-budgetWindow {
			calls += bk.calls
			retries += bk.retries
		}
	}
	if float64(retries+1) > b.ratio*float64(calls)+b.floor*budgetWindow {
		return false
	}
	cur.retries++
	return true
}

// String describes the budget as it was given, for example
// "budget 10% floor 0/s" for NewBudget(0.1, 0) and "budget 7% floor 0/s"
// for NewBudget(0.07, 0); a nil *Budget, the budget of a policy that has
// none, is "no budget".
func (b *Budget) String() string {
	if b == nil {
		return "no budget"
	}
	return "budget " + percent(b.ratio) + "% floor " + formatFloat(b.floor) + "/s"
}

// percent writes r × 100 from r's shortest decimal form, so that 0.07 reads
// "7" rather than the "7.000000000000001" of a float multiplication.
func percent(r float64) string {
	s := strconv.FormatFloat(r, 'e', -1, 64) // d.ddde±x: shift the exponent by 2
	mant, exp, _ := strings.Cut(s, "e")
	e, err := strconv.Atoi(exp)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return strconv.FormatFloat(r*100, 'g', -1, 64)
	}
	v, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(e+2), 64)
	if err != nil {
		return strconv.FormatFloat(r*100, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// bucket returns the bucket of now's second, emptied if it held an older
// one. A now older than the bucket's (callers' clocks read a little apart)
// counts in the newer second rather than wiping it.
func (b *Budget) bucket(now time.Time) *budgetBucket {
	sec := now.Unix()
	bk := &b.buckets[uint64(sec)%budgetWindow]
	if bk.second < sec {
		*bk = budgetBucket{second: sec}
	}
	return bk
}
