package retryriver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryriver"
)

var (
	errDown   = errors.New("connection refused")
	errBadArg = errors.New("bad payload")
)

func newMiddleware(t *testing.T, p policy.Policy) *retryriver.Middleware {
	t.Helper()
	m, err := retryriver.NewMiddleware(p)
	require.NoError(t, err)
	return m
}

// work runs job through m with an inner worker returning err, and returns
// what m returned and whether the worker ran.
func work(m *retryriver.Middleware, job *rivertype.JobRow, err error) (error, bool) {
	ran := false
	out := m.Work(context.Background(), job, func(context.Context) error { ran = true; return err })
	return out, ran
}

func TestMiddlewareMapsErrorsOntoRiver(t *testing.T) {
	p := policy.Exponential(time.Second).WithRetryIf(func(err error) bool { return !errors.Is(err, errBadArg) })
	tests := []struct {
		name   string
		err    error
		snooze time.Duration // > 0 or zero with snoozed set: a JobSnooze of it
		snzd   bool
		cancel error // a JobCancel whose error matches this
		same   bool  // the worker's error, as it is
	}{
		{name: "success", err: nil, same: true},
		{name: "plain error: River's retry", err: errDown, same: true},
		{name: "wrapped plain error", err: fmt.Errorf("deliver: %w", errDown), same: true},
		{name: "hint: snooze", err: retry.After(2*time.Second, errDown), snooze: 2 * time.Second, snzd: true},
		{name: "hint above the cap is honoured", err: retry.After(4*time.Minute, errDown), snooze: 4 * time.Minute, snzd: true},
		{name: "wrapped hint", err: fmt.Errorf("deliver: %w", retry.After(3*time.Second, errDown)), snooze: 3 * time.Second, snzd: true},
		{name: "negative hint: at once", err: retry.After(-time.Second, errDown), snooze: 0, snzd: true},
		{name: "hint above the ceiling: cancelled", err: retry.After(time.Hour, errDown), cancel: retry.ErrHintTooLong},
		{name: "permanent: cancelled", err: retry.Permanent(errBadArg), cancel: errBadArg},
		{name: "permanent wins over a hint", err: retry.Permanent(retry.After(time.Second, errDown)), cancel: errDown},
		{name: "not retried by the policy: cancelled", err: fmt.Errorf("decode: %w", errBadArg), cancel: errBadArg},
		{name: "River's snooze passes through", err: river.JobSnooze(5 * time.Second), snooze: 5 * time.Second, snzd: true},
		{name: "River's cancel passes through", err: river.JobCancel(errDown), cancel: errDown},
	}
	m := newMiddleware(t, p)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ran := work(m, &rivertype.JobRow{Attempt: 1}, tt.err)
			require.True(t, ran)
			var snoozed *rivertype.JobSnoozeError
			switch {
			case tt.snzd:
				require.ErrorAs(t, out, &snoozed)
				require.Equal(t, tt.snooze, snoozed.Duration)
			case tt.cancel != nil:
				require.ErrorIs(t, out, &rivertype.JobCancelError{})
				require.ErrorIs(t, out, tt.cancel)
				require.False(t, errors.As(out, &snoozed))
			default:
				require.Equal(t, tt.err, out)
			}
		})
	}
	out, _ := work(m, &rivertype.JobRow{Attempt: 1}, retry.After(time.Hour, errDown))
	require.ErrorIs(t, out, errDown, "a hint above the ceiling keeps the worker's error")
	out, _ = work(newMiddleware(t, p.WithMaxHint(2*time.Hour)), &rivertype.JobRow{Attempt: 1}, retry.After(time.Hour, errDown))
	var snoozed *rivertype.JobSnoozeError
	require.ErrorAs(t, out, &snoozed, "a higher ceiling lets the hour through")
	require.Equal(t, time.Hour, snoozed.Duration)
}

// The limits of the policy are the job's business, not the middleware's:
// an attempt limit of 1 does not cancel a job that failed.
func TestMiddlewareLeavesLimitsToRiver(t *testing.T) {
	m := newMiddleware(t, policy.Constant(time.Second).WithMaxAttempts(1).WithMaxElapsed(time.Millisecond))
	out, _ := work(m, &rivertype.JobRow{Attempt: 7}, errDown)
	require.Equal(t, errDown, out)
}

func TestMiddlewareAdmission(t *testing.T) {
	// A guard of two tokens: a first try that fails fast takes half the
	// ratio, a retry that fails a whole token, and every success adds one
	// (up to the two).
	g := policy.NewGuard(2, 1)
	p := policy.Exponential(time.Second).WithGuard(g)
	m := newMiddleware(t, p)
	now := epoch
	m.SetNow(func() time.Time { return now })
	job := func(attempt int) *rivertype.JobRow { return &rivertype.JobRow{Attempt: attempt} }

	out, ran := work(m, job(1), errDown)
	require.True(t, ran)
	require.Equal(t, errDown, out)
	require.Equal(t, 1.5, protocol(g).Tokens(), "a first try that fails fast takes half the ratio")
	out, ran = work(m, job(2), errDown)
	require.True(t, ran, "a retry with a token left")
	require.Equal(t, errDown, out)
	require.Equal(t, 0.5, protocol(g).Tokens(), "a retry that failed takes a token")

	// No token left: one retry a second runs, as a probe; the others are
	// snoozed for their attempt's back-off instead of running.
	_, ran = work(m, job(3), errDown)
	require.True(t, ran, "the probe")
	out, ran = work(m, job(3), nil)
	require.False(t, ran, "a retry ran while the guard held retries back")
	var snoozed *rivertype.JobSnoozeError
	require.ErrorAs(t, out, &snoozed)
	require.Equal(t, 4*time.Second, snoozed.Duration, "the back-off after attempt 3")
	// Snoozed once already: the schedule carries on, as retry.Do's does
	// after a denied retry's wait.
	again := &rivertype.JobRow{Attempt: 3, Metadata: []byte(`{"retryriver:waits": 1}`)}
	out, ran = work(m, again, nil)
	require.False(t, ran)
	require.ErrorAs(t, out, &snoozed)
	require.Equal(t, 8*time.Second, snoozed.Duration, "the step after the snooze's")

	// A schedule of zero delays still snoozes a held-back retry for a second.
	zero := newMiddleware(t, policy.Constant(0).WithGuard(g))
	zero.SetNow(func() time.Time { return now })
	out, ran = work(zero, job(2), nil)
	require.False(t, ran)
	require.ErrorAs(t, out, &snoozed)
	require.Equal(t, time.Second, snoozed.Duration)

	// A second later the next probe runs; its success adds the ratio, a
	// whole token here, and the retries follow.
	now = now.Add(time.Second)
	out, ran = work(m, job(3), nil)
	require.True(t, ran)
	require.NoError(t, out)
	require.Equal(t, 1.0, protocol(g).Tokens())
	_, ran = work(m, job(2), nil)
	require.True(t, ran)
	require.Equal(t, 2.0, protocol(g).Tokens())

	// A hint is an overload and takes a token, first tries included; a
	// cancelled job is no news.
	_, _ = work(m, job(1), retry.Permanent(errBadArg))
	require.Equal(t, 2.0, protocol(g).Tokens())
	_, _ = work(m, job(1), retry.After(time.Second, errDown))
	require.Equal(t, 1.0, protocol(g).Tokens())
}

func TestMiddlewareContextEnded(t *testing.T) {
	g := policy.NewGuard(2, 1)
	require.Equal(t, 2.0, protocol(g).Tokens())
	m := newMiddleware(t, policy.Exponential(time.Second).WithGuard(g))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := m.Work(ctx, &rivertype.JobRow{Attempt: 1}, func(ctx context.Context) error { return ctx.Err() })
	require.ErrorIs(t, out, context.Canceled, "left to River")
	require.Equal(t, 2.0, protocol(g).Tokens(), "a job stopped by its own context is no news")

	ctx, cancel = context.WithTimeout(context.Background(), 0)
	defer cancel()
	out = m.Work(ctx, &rivertype.JobRow{Attempt: 1}, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	require.ErrorIs(t, out, context.DeadlineExceeded)
	require.Equal(t, 1.0, protocol(g).Tokens(), "a run past its timeout is an overload")
}

// protocol returns g with the protocol that retrykit's packages drive.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }
