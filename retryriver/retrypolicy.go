package retryriver

import (
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/policy"
)

// RetryPolicy is a river.ClientRetryPolicy that schedules a failed job's
// next attempt by a retrykit policy: after failed attempt n (the job's
// Attempt, counting the first run) it waits the policy's Backoff(n, prev),
// jitter and cap included, where prev is the wait before attempt n as the
// job's row records it (from the previous attempt's start to this one's
// scheduled time; 0 after the first). Give it to river.Config.RetryPolicy,
// or call its NextRetry from a worker's own NextRetry for a policy of that
// kind of job.
//
// The zero RetryPolicy is not usable; use [NewRetryPolicy]. A RetryPolicy
// is safe for concurrent use.
type RetryPolicy struct {
	p   policy.Policy
	now func() time.Time
}

var _ river.ClientRetryPolicy = (*RetryPolicy)(nil)

// NewRetryPolicy returns the retry policy of p, or an error matching
// policy.ErrInvalid when p is not valid.
func NewRetryPolicy(p policy.Policy) (*RetryPolicy, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("retryriver: %w", err)
	}
	return &RetryPolicy{p: p, now: time.Now}, nil
}

// NextRetry returns when the job, whose attempt job.Attempt just failed,
// runs again: now plus the policy's delay for that attempt. A nil job is
// scheduled as a first attempt's failure.
func (r *RetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	n, prev := 1, time.Duration(0)
	if job != nil {
		n, prev = max(job.Attempt, 1), previousWait(job)
	}
	return r.now().Add(r.p.Backoff(n, prev))
}

// previousWait is the wait before the job's current attempt: from the start
// of the attempt before it, the last one recorded in its errors, to the
// current attempt's scheduled time. It is 0 for a first attempt, and counts
// any snooze in between.
func previousWait(job *rivertype.JobRow) time.Duration {
	if len(job.Errors) == 0 {
		return 0
	}
	return max(job.ScheduledAt.Sub(job.Errors[len(job.Errors)-1].At), 0)
}
