package retryriver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/policy"
)

// Middleware is a river worker middleware that maps what a job's worker
// returns onto River's vocabulary, by the rules of retry.Do under its
// policy:
//
//   - nil completes the job;
//   - an error marked with retry.After(d, err) snoozes the job for d, which
//     uses up no attempt (a hint ≤ 0: at once), though the schedule counts
//     it as retry.Do's does (see [RetryPolicy]); a hint above the policy's
//     hint ceiling (policy.Policy.WithMaxHint) cancels the job instead, with
//     an error matching retry.ErrHintTooLong and the worker's error;
//   - an error marked with retry.Permanent, or one the policy does not retry
//     (policy.Policy.WithRetryIf), cancels the job (river.JobCancel): it is
//     not run again;
//   - any other error is left to River, which retries the job on its retry
//     policy (a [RetryPolicy] for the same policy) until its MaxAttempts;
//   - River's own river.JobSnooze and river.JobCancel pass through as they are.
//
// Admission: when the policy has a guard (policy.Policy.WithGuard), a retry
// (a run whose Attempt is above 1: River counts failed runs, not snoozed
// ones, so a job back from a hint's snooze runs as it was asked to) runs
// only if the guard admits it (while a token is left; see policy.Guard);
// otherwise the job is snoozed for the schedule's next delay, as retry.Do
// waits one before it asks again, but never less than a second, and asks
// again then. A guard with no token left still admits one retry a
// second, as a probe, so held-back jobs follow as soon as the dependency is
// back. The guard learns how every run ended: a success, a failure, or an
// overload (a hint, or a run past its timeout). Runs ended by the job's
// context being cancelled, and errors that cancel the job, are no news
// about the dependency. One guard serves one process: give the workers of
// one dependency their own Middleware and guard.
//
// Install it in river.Config.Middleware, or return it from a worker's
// Middleware method for one kind of job. The zero Middleware is not usable;
// use [NewMiddleware]. A Middleware is safe for concurrent use.
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

// NewMiddleware returns the middleware of p, or an error matching
// policy.ErrInvalid when p is not valid.
func NewMiddleware(p policy.Policy) (*Middleware, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("retryriver: %w", err)
	}
	return &Middleware{p: p, guard: admissionOf(p), now: time.Now}, nil
}

// Work runs the job through doInner, unless admission holds a retry back,
// and returns what River should do with it (see [Middleware]).
func (m *Middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	admitted := job != nil && job.Attempt > 1
	if admitted && !m.guard.allow(m.now()) {
		return snoozeFor(ctx, job, max(m.p.Backoff(step(job), previousWait(job)), minDeniedSnooze))
	}
	err := doInner(ctx)
	if err == nil {
		m.guard.record(admitted, policy.Succeeded)
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
