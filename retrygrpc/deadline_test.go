package retrygrpc_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
)

// lateTimer is a context whose timer fires late, as a context's can on a
// loaded machine: Deadline reports dl, but Done closes only when the
// embedded context is done, some time after dl.
type lateTimer struct {
	context.Context
	dl time.Time
}

func (c lateTimer) Deadline() (time.Time, bool) { return c.dl, true }

// withLateTimer returns a context with deadline dl that is done late
// after it.
func withLateTimer(parent context.Context, dl time.Time, late time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(parent, dl.Add(late))
	return lateTimer{ctx, dl}, cancel
}

// lateClock is the real clock whose per-attempt deadlines (WithTimeout, as
// retry.Do asks a policy's clock for them) fire late.
type lateClock struct{ late time.Duration }

func (lateClock) Now() time.Time                         { return time.Now() }
func (lateClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (c lateClock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return withLateTimer(ctx, time.Now().Add(d), c.late)
}

// transportFirst is an invoker whose transport sees the attempt's deadline
// pass before its context does: it returns DeadlineExceeded at the deadline.
func transportFirst(calls *int) grpc.UnaryInvoker {
	return func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		*calls++
		dl, _ := ctx.Deadline()
		time.Sleep(time.Until(dl))
		return status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM with error code: CANCEL")
	}
}

func TestDeadlineSeenFirstByTheTransport(t *testing.T) {
	attemptTimeout := policy.Constant(time.Second).WithMaxAttempts(2).
		WithAttemptTimeout(100 * time.Millisecond).WithClock(lateClock{late: time.Millisecond})
	for _, tc := range []struct {
		name     string
		p        policy.Policy
		opts     []retrygrpc.Option
		deadline time.Duration // the caller's, 0 for none
		calls    int
		elapsed  time.Duration
		is       []error // what the error matches
		isNot    []error
	}{{
		name:     "the caller's deadline, a code not retried",
		p:        policy.Constant(time.Second),
		deadline: 100 * time.Millisecond,
		calls:    1,
		elapsed:  100*time.Millisecond + time.Millisecond, // until the context was done
		is:       []error{context.DeadlineExceeded},
		isNot:    []error{retry.ErrExhausted},
	}, {
		name:     "the caller's deadline, a retried code on the last attempt",
		p:        policy.Constant(time.Second).WithMaxAttempts(1),
		opts:     []retrygrpc.Option{retrygrpc.WithCodes(codes.Unavailable, codes.DeadlineExceeded)},
		deadline: 100 * time.Millisecond,
		calls:    1,
		elapsed:  100*time.Millisecond + time.Millisecond,
		is:       []error{context.DeadlineExceeded},
		isNot:    []error{retry.ErrExhausted},
	}, {
		name:    "the attempt timeout",
		p:       attemptTimeout,
		calls:   2,
		elapsed: 2*(100*time.Millisecond+time.Millisecond) + time.Second,
		is:      []error{retry.ErrAttemptTimeout, context.DeadlineExceeded, retry.ErrExhausted},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = withLateTimer(ctx, time.Now().Add(tc.deadline), time.Millisecond)
					defer cancel()
				}
				calls, start := 0, time.Now()
				err := retrygrpc.UnaryClientInterceptor(tc.p, tc.opts...)(ctx, "/m", nil, nil, nil, transportFirst(&calls))
				require.Equal(t, codes.DeadlineExceeded, status.Code(err))
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.Equal(t, codes.DeadlineExceeded, status.Code(re.Last), "the last status")
				for _, want := range tc.is {
					require.ErrorIs(t, err, want)
				}
				for _, not := range tc.isNot {
					require.NotErrorIs(t, err, not)
				}
				require.Equal(t, tc.calls, calls)
				require.Equal(t, tc.elapsed, time.Since(start), "waited for the context's timer, no longer")
			})
		})
	}
}

func TestDeadlinePassedButContextNeverDone(t *testing.T) {
	// A context past its deadline that stays live (a mock clock's, whose
	// time stands still) holds the call for a second at most; the status
	// then counts as the server's.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := withLateTimer(t.Context(), time.Now().Add(100*time.Millisecond), time.Hour)
		defer cancel()
		calls, start := 0, time.Now()
		err := retrygrpc.UnaryClientInterceptor(policy.Constant(time.Second))(ctx, "/m", nil, nil, nil, transportFirst(&calls))
		require.Equal(t, 100*time.Millisecond+time.Second, time.Since(start))
		require.Equal(t, 1, calls)
		require.Equal(t, codes.DeadlineExceeded, status.Code(err))
		var re *retry.Error
		require.NotErrorAs(t, err, &re)
	})
}

// The same races through a real server: it holds the call, grpc's server
// resets the stream when its deadline passes, and the client's transport,
// its deadline passed too, reports DeadlineExceeded while the context's
// timer has yet to fire.

func TestDeadlineSeenFirstByTheServer(t *testing.T) {
	h := &health{steps: []step{{hang: true}}}
	c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(policy.Constant(time.Second))))
	ctx, cancel := withLateTimer(t.Context(), time.Now().Add(50*time.Millisecond), 200*time.Millisecond)
	defer cancel()
	_, err := c.Check(ctx, req)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var re *retry.Error
	require.ErrorAs(t, err, &re, "the caller's deadline, not a server's status")
	require.Equal(t, 1, h.count())
}

func TestAttemptTimeoutSeenFirstByTheServer(t *testing.T) {
	h := &health{steps: []step{{hang: true}}}
	p := policy.Constant(0).WithMaxAttempts(2).WithAttemptTimeout(50 * time.Millisecond).
		WithClock(lateClock{late: 200 * time.Millisecond})
	c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.ErrorIs(t, err, retry.ErrAttemptTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded, "as an attempt timeout does in package retry")
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 2, h.count())
}

// A call whose attempts all run out of the policy's per-attempt timeout
// ends with an error whose last attempt matches retry.ErrAttemptTimeout and
// context.DeadlineExceeded, as in package retry, and whose code is
// DeadlineExceeded. The call's own context is live: the caller tells the
// two deadlines apart by ErrAttemptTimeout, or by asking its context.
func TestAttemptTimeoutsMatchDeadlineExceeded(t *testing.T) {
	h := &health{steps: []step{{hang: true}}}
	p := policy.Constant(0).WithMaxAttempts(3).WithAttemptTimeout(20 * time.Millisecond)
	c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 3, re.Attempts)
	require.ErrorIs(t, re.Last, retry.ErrAttemptTimeout)
	require.ErrorIs(t, re.Last, context.DeadlineExceeded)
	require.Equal(t, codes.DeadlineExceeded, status.Code(re.Last), "the last status")
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.NoError(t, t.Context().Err())
	require.Equal(t, 3, h.count())
}

// A call whose retry the caller cancels ends as the context ending does:
// codes.Canceled, a *retry.Error matching context.Canceled and the cause,
// with the server's failure before it as the last error, even under a
// policy that retries only that failure. A deadline is a timeout to
// os.IsTimeout.
func TestCallCancelledDuringARetryKeepsTheLastFailure(t *testing.T) {
	errShutdown := errors.New("shutting down")
	unavailable := func(err error) bool { return status.Code(err) == codes.Unavailable }
	for name, p := range map[string]policy.Policy{
		"every error":      policy.Constant(10 * time.Millisecond),
		"only Unavailable": policy.Constant(10 * time.Millisecond).WithRetryIf(unavailable),
	} {
		t.Run(name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable}, {hang: true}}}
			c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
			ctx, cancel := context.WithCancelCause(t.Context())
			time.AfterFunc(200*time.Millisecond, func() { cancel(errShutdown) })
			_, err := c.Check(ctx, req)
			require.Equal(t, codes.Canceled, status.Code(err))
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, err, errShutdown)
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			require.Equal(t, codes.Unavailable, status.Code(re.Last), "the server's failure, not the cancellation")
			require.Equal(t, 2, h.count())
		})
	}
	t.Run("deadline", func(t *testing.T) {
		h := &health{steps: []step{{code: codes.Unavailable}, {hang: true}}}
		c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(policy.Constant(10*time.Millisecond))))
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Check(ctx, req)
		require.Equal(t, codes.DeadlineExceeded, status.Code(err))
		require.True(t, os.IsTimeout(err), "%v", err)
	})
}
