package riversuite_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryriver"
)

// The errors of the jobs: a dependency that is down, and a payload that no
// retry will mend.
var (
	errDown   = errors.New("connection refused")
	errBadArg = errors.New("bad payload")
)

// peakPerSecond is the most of times (sorted) that fall in any one second,
// as in retryriver's TestHerd.
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

// TestHerdRiver runs a smaller herd on a real River: 200 jobs fail their
// first attempt together and succeed their second. Under River's default
// policy the retries come back within about 0.2 s of each other; under a
// policy of 4 s with full jitter, spread over 4 s.
func TestHerdRiver(t *testing.T) {
	const jobs = 200
	measure := func(t *testing.T, p *policy.Policy) int {
		_, pool := newDB(t)
		var mu sync.Mutex
		var firstEnd time.Time
		var retries []time.Duration
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(_ context.Context, job *river.Job[testArgs]) error {
			mu.Lock()
			defer mu.Unlock()
			if job.Attempt == 1 {
				firstEnd = time.Now()
				return errDown
			}
			retries = append(retries, time.Since(firstEnd))
			return nil
		}))
		cfg := &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: jobs}}}
		if p != nil {
			rp, err := retryriver.NewRetryPolicy(*p)
			require.NoError(t, err)
			mw, err := retryriver.NewMiddleware(*p)
			require.NoError(t, err)
			cfg.RetryPolicy, cfg.Middleware = rp, []rivertype.Middleware{mw}
		}
		client := newClient(t, pool, cfg)
		names := make([]string, jobs)
		for i := range names {
			names[i] = "job" + itoa(i)
		}
		ids := insert(t, client, names...)
		for _, row := range waitFinal(t, client, 30*time.Second, ids...) {
			require.Equal(t, rivertype.JobStateCompleted, row.State)
		}
		slices.Sort(retries)
		return peakPerSecond(retries)
	}
	var riverPeak, ourPeak int
	t.Run("default", func(t *testing.T) { riverPeak = measure(t, nil) })
	spread := policy.Exponential(4 * time.Second).WithJitter(backoff.Jitter{Kind: backoff.Full})
	t.Run("retrykit", func(t *testing.T) { ourPeak = measure(t, &spread) })
	t.Logf("%d jobs failing together on a real River: busiest second %d retries with River's default policy, %d with %v",
		jobs, riverPeak, ourPeak, spread)
	require.Greater(t, riverPeak, jobs*9/10)
	require.Less(t, ourPeak, jobs/2)
}
