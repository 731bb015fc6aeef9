package retryriver_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryriver"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newRetryPolicy(t *testing.T, p policy.Policy) *retryriver.RetryPolicy {
	t.Helper()
	r, err := retryriver.NewRetryPolicy(p)
	require.NoError(t, err)
	r.SetNow(func() time.Time { return epoch })
	return r
}

// jobAt returns the row of a job whose attempt n is running: attempts
// before it failed at one-second intervals from epoch, and it was
// scheduled wait after the last of them started.
func jobAt(n int, wait time.Duration) *rivertype.JobRow {
	job := &rivertype.JobRow{Attempt: n, ScheduledAt: epoch}
	for i := 1; i < n; i++ {
		job.Errors = append(job.Errors, rivertype.AttemptError{Attempt: i, At: epoch.Add(time.Duration(i) * time.Second)})
	}
	if n > 1 {
		job.ScheduledAt = job.Errors[n-2].At.Add(wait)
	}
	return job
}

func TestNextRetryFollowsTheSchedule(t *testing.T) {
	r := newRetryPolicy(t, policy.Default())
	var got []time.Duration
	for n := 1; n <= 8; n++ {
		got = append(got, r.NextRetry(jobAt(n, 0)).Sub(epoch))
	}
	s := time.Second
	require.Equal(t, []time.Duration{10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s, 300 * s}, got)
	require.Equal(t, 10*s, r.NextRetry(nil).Sub(epoch), "a nil job is a first failure")
	require.Equal(t, 10*s, r.NextRetry(&rivertype.JobRow{}).Sub(epoch), "attempt 0 counts as 1")
}

func TestNextRetryJitter(t *testing.T) {
	jittered := func(seed uint64) policy.Policy {
		return policy.Exponential(time.Second).WithCap(time.Minute).
			WithJitter(backoff.Jitter{Kind: backoff.Full}).WithRandom(rand.NewPCG(seed, seed))
	}
	r := newRetryPolicy(t, jittered(7))
	want := jittered(7)
	for n := 1; n <= 10; n++ {
		got := r.NextRetry(jobAt(n, 0)).Sub(epoch)
		require.Equal(t, want.Backoff(n, 0), got, "attempt %d", n)
		require.LessOrEqual(t, got, time.Minute, "above the cap")
	}
}

func TestNextRetryPassesThePreviousWait(t *testing.T) {
	// Decorrelated jitter draws from [base, 3 × prev]: with prev taken from
	// the row, the delays grow instead of staying near the base.
	p := policy.Exponential(time.Second).WithCap(time.Hour).WithJitter(backoff.Jitter{Kind: backoff.Decorrelated})
	r := newRetryPolicy(t, p)
	for range 100 {
		got := r.NextRetry(jobAt(3, 40*time.Second)).Sub(epoch)
		require.GreaterOrEqual(t, got, time.Second)
		require.LessOrEqual(t, got, 120*time.Second)
	}
	// prev: the wait before attempt 3 is its scheduled time less the start
	// of attempt 2; without errors there is none.
	require.Equal(t, p.WithRandom(rand.NewPCG(1, 1)).Backoff(3, 40*time.Second),
		newRetryPolicy(t, p.WithRandom(rand.NewPCG(1, 1))).NextRetry(jobAt(3, 40*time.Second)).Sub(epoch))
}

// The snoozes the middleware made a job take, as its metadata counts them,
// are steps of the schedule: the next failure waits the step after them.
// Other metadata, or none, counts for nothing.
func TestNextRetryCountsTheMiddlewaresSnoozes(t *testing.T) {
	r := newRetryPolicy(t, policy.Default())
	s := time.Second
	for _, tt := range []struct {
		metadata string
		want     time.Duration
	}{
		{``, 20 * s},
		{`{}`, 20 * s},
		{`{"snoozes": 3, "output": {"x": 1}}`, 20 * s},
		{`{"retryriver:waits": 1, "snoozes": 1}`, 40 * s},
		{`{"retryriver:waits": 3}`, 160 * s},
		{`{"retryriver:waits": -1}`, 20 * s},
		{`not json`, 20 * s},
	} {
		job := jobAt(2, 0)
		job.Metadata = []byte(tt.metadata)
		require.Equal(t, tt.want, r.NextRetry(job).Sub(epoch), "metadata %s", tt.metadata)
	}
}

func TestNewRejectsAnInvalidPolicy(t *testing.T) {
	bad := policy.Exponential(-time.Second)
	_, err := retryriver.NewRetryPolicy(bad)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, "retryriver: ")
	_, err = retryriver.NewMiddleware(bad)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, "retryriver: ")
}
