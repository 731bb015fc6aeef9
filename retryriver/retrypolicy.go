package retryriver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/policy"
)

// RetryPolicy is a river.ClientRetryPolicy that schedules a failed job's
// next run after the policy's delay, p.Backoff(n, prev). The delay is
// jittered and capped as every delay of the policy is.
//
// n counts the job's attempts, the first run included. It also counts the
// snoozes the job's [Middleware] made it take, for a hint or for a retry the
// guard denied. So the schedule carries on after those waits, as in
// retry.Do, instead of repeating a step. prev is the wait before the current
// attempt, as the job's row records it. It runs from the previous attempt's
// start to this attempt's scheduled time, and is 0 after the first attempt.
//
// Give a RetryPolicy to river.Config.RetryPolicy. For one kind of job, call
// its NextRetry from the worker's own NextRetry method.
//
// The zero RetryPolicy is not usable; use [NewRetryPolicy]. A RetryPolicy
// is safe for concurrent use.
type RetryPolicy struct {
	p   policy.Policy
	now func() time.Time
}

var _ river.ClientRetryPolicy = (*RetryPolicy)(nil)

// NewRetryPolicy returns the RetryPolicy of p. It returns an error matching
// policy.ErrInvalid when p is not valid.
func NewRetryPolicy(p policy.Policy) (*RetryPolicy, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("retryriver: %w", err)
	}
	return &RetryPolicy{p: p, now: time.Now}, nil
}

// NextRetry returns when job runs again, after its attempt job.Attempt just
// failed: now plus the policy's delay for that attempt. A nil job is
// scheduled as if its first attempt had failed.
func (r *RetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	n, prev := 1, time.Duration(0)
	if job != nil {
		n, prev = step(job), previousWait(job)
	}
	return r.now().Add(r.p.Backoff(n, prev))
}

// waitsKey is the job's metadata key under which the middleware counts the
// snoozes it made the job take: for a hint, and for a retry the guard held
// back. River counts neither as an attempt. retry.Do's schedule counts
// every wait, and so does step.
const waitsKey = "retryriver:waits"

// step returns the schedule's position of the wait that follows the job's
// current attempt: its attempts, counting the first run, and the snoozes
// the middleware made it take.
func step(job *rivertype.JobRow) int {
	return max(job.Attempt, 1) + snoozed(job)
}

// snoozed returns the snoozes the middleware made job take, as its
// metadata records them; 0 for none, or for a job row without metadata.
func snoozed(job *rivertype.JobRow) int {
	if job == nil || len(job.Metadata) == 0 {
		return 0
	}
	var m struct {
		Waits int `json:"retryriver:waits"`
	}
	if json.Unmarshal(job.Metadata, &m) != nil {
		return 0
	}
	return max(m.Waits, 0)
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
