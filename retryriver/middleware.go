package retryriver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

// Middleware is a River worker middleware that turns what a job's worker
// returns into what River does with the job, by the rules retry.Do follows
// under the same policy:
//
//   - nil completes the job.
//   - An error marked with retry.After(d, err) snoozes the job for d. A
//     snooze uses up no attempt, and a hint ≤ 0 runs the job again at once.
//     The schedule still counts the snooze as a wait, as retry.Do's does
//     (see [RetryPolicy]).
//   - A hint above the policy's hint ceiling (policy.Policy.WithMaxHint)
//     cancels the job instead. The job's error matches retry.ErrHintTooLong
//     and the worker's error.
//   - An error marked with retry.Permanent cancels the job (river.JobCancel),
//     and so does an error the policy does not retry
//     (policy.Policy.WithRetryIf). A cancelled job does not run again.
//   - Any other error is left to River. River retries the job by its retry
//     policy, which should be a [RetryPolicy] of the same policy, until the
//     job's MaxAttempts.
//   - River's own river.JobSnooze and river.JobCancel pass through unchanged.
//
// A retry runs only while the policy's guard admits it. A retry is a run
// whose job.Attempt is above 1. Only a guard set with policy.Policy.WithGuard
// is asked; a policy with no guard admits every retry. First runs are never
// denied. River counts failed runs, not snoozes. So a first run that
// snoozed for a hint is still a first run when it comes back, and is not
// denied.
//
// A retry the guard denies is snoozed for the schedule's next delay, and
// asks again when it comes back. The snooze is never shorter than a second.
// This is the job's form of retry.Do waiting its back-off and asking again.
// A guard with no token left still admits one retry a second, as a probe. So
// the held-back jobs follow as soon as the dependency is back.
//
// The guard learns how every run ended: a success, a failure, or an
// overload. A run counts as overload as policy.Guard defines it: a run cut off
// by its timeout, an error that reports a timeout, or a hint. A run
// ended because the job's context was cancelled tells the guard nothing,
// and neither does an error that cancels the job. A guard counts the load
// of one process only, so give the workers of one dependency their own
// Middleware and guard.
//
// Install a Middleware in river.Config.Middleware, or return it from a
// worker's Middleware method for one kind of job. The zero Middleware is not
// usable; use [NewMiddleware]. A Middleware is safe for concurrent use.
type Middleware struct {
	river.MiddlewareDefaults
	p     policy.Policy
	guard admission
	now   func() time.Time
}

var _ rivertype.WorkerMiddleware = (*Middleware)(nil)

// minDeniedSnooze is the shortest snooze of a retry the guard holds back,
// so that a policy of zero delays does not make each held-back job a
// round trip to the database in a loop.
const minDeniedSnooze = time.Second

// NewMiddleware returns the Middleware of p. It returns an error matching
// policy.ErrInvalid when p is not valid.
func NewMiddleware(p policy.Policy) (*Middleware, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("retryriver: %w", err)
	}
	return &Middleware{p: p, guard: admissionOf(p), now: time.Now}, nil
}

// Work runs the job through doInner and returns what River should do with
// it (see [Middleware]). A retry the guard denies is snoozed without running.
func (m *Middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	admitted := job != nil && job.Attempt > 1
	if admitted && !m.guard.allow(m.now()) {
		return snoozeFor(ctx, job, max(m.p.Backoff(step(job), previousWait(job)), minDeniedSnooze))
	}
	err := doInner(ctx)
	if err == nil {
		m.guard.record(admitted, admit.Succeeded)
		return nil
	}
	var snoozed *rivertype.JobSnoozeError
	if errors.As(err, &snoozed) || errors.Is(err, &rivertype.JobCancelError{}) {
		return err
	}
	v := judge(m.p, err)
	switch {
	case v.action == cancel:
		return river.JobCancel(v.err)
	case ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded:
		// The job's context was cancelled: no news about the dependency.
	default:
		m.guard.record(admitted, v.v.Outcome)
	}
	if v.action == snooze {
		return snoozeFor(ctx, job, v.hint)
	}
	return err
}

// snoozeFor snoozes job for d, and counts the snooze in its metadata, so
// that the schedule carries on after it (see step). ctx is the run's work
// context, the only one River takes metadata from; outside River's work
// (a test calling Work by hand) the snooze is not counted.
func snoozeFor(ctx context.Context, job *rivertype.JobRow, d time.Duration) error {
	_ = river.MetadataSet(ctx, waitsKey, snoozed(job)+1)
	return river.JobSnooze(d)
}
