package retryriver_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryriver"
)

// herdPolicy is the policy of the herd figure in the README: 10 s doubling
// to 10 minutes, full jitter.
var herdPolicy = policy.Exponential(10 * time.Second).WithCap(10 * time.Minute).
	WithJitter(backoff.Jitter{Kind: backoff.Full})

// peakPerSecond is the most of times (sorted) that fall in any one second.
func peakPerSecond(times []time.Duration) int {
	peak, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= time.Second {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// herd returns the start times of the retries of jobs that fail together
// at 0 and keep failing while the dependency is down, under a retry policy
// given as the delay it schedules after failed attempt n. A retry that
// starts once the dependency is back succeeds.
func herd(jobs int, down time.Duration, delay func(n int) time.Duration) []time.Duration {
	var retries []time.Duration
	for range jobs {
		at := time.Duration(0)
		for n := 1; at < down; n++ {
			at += delay(n)
			retries = append(retries, at)
		}
	}
	slices.Sort(retries)
	return retries
}

// TestHerd computes, from the NextRetry of each policy, when the retries
// of 1,000 jobs that fail together come back while their dependency is
// down for ten minutes, and compares the busiest second.
func TestHerd(t *testing.T) {
	const jobs, down = 1000, 10 * time.Minute
	riverDefault := &river.DefaultClientRetryPolicy{}
	// A seeded source makes the figure reproducible; other seeds give 150
	// to 180.
	ours, err := retryriver.NewRetryPolicy(herdPolicy.WithRandom(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	ours.SetNow(func() time.Time { return epoch })
	// River counts the job's recorded errors, retrykit its attempt: a job
	// whose attempt n failed has n-1 errors and Attempt n.
	row := func(n int) *rivertype.JobRow {
		return &rivertype.JobRow{Attempt: n, ScheduledAt: epoch, Errors: make([]rivertype.AttemptError, n-1)}
	}
	riverPeak := peakPerSecond(herd(jobs, down, func(n int) time.Duration {
		now := time.Now()
		return riverDefault.NextRetry(row(n)).Sub(now)
	}))
	ourPeak := peakPerSecond(herd(jobs, down, func(n int) time.Duration {
		return ours.NextRetry(row(n)).Sub(epoch)
	}))
	t.Logf("%d jobs failing together, dependency down %v: busiest second %d retries with River's default policy, %d with %v",
		jobs, down, riverPeak, ourPeak, herdPolicy)
	require.Greater(t, riverPeak, 900, "River's first retries come back within 0.2 s of each other")
	require.Less(t, ourPeak*5, riverPeak)
}
