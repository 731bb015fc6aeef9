//go:build go1.25

package retry_test

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/internal/served"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// serve returns a context that records its calls as a server behind
// retryhttp.Handler does, with previous attempts before it.
func serve(previous int) (context.Context, *served.Record) {
	return served.Serve(context.Background(), previous, neterr.Connection)
}

// fast is a policy of 4 attempts that waits nothing.
var fast = policy.Constant(0).WithMaxAttempts(4)

func TestServedNothingFailed(t *testing.T) {
	ctx, s := serve(0)
	require.NoError(t, retry.Do(ctx, func(context.Context) error { return nil }, fast))
	require.False(t, s.Pushback())
}

func TestServedPartialFailureSaysRetry(t *testing.T) {
	ctx, s := serve(0)
	n := 0
	err := retry.Do(ctx, func(context.Context) error { n++; return errFlaky }, fast)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 4, n, "a first request keeps its retries")
	require.False(t, s.Pushback(), "failures that are not overload, with tokens left: a retry upstream may succeed")
}

// stalledGuard returns a guard whose last 16 attempts showed overload.
func stalledGuard() *policy.Guard {
	g := policy.NewGuard(50, 1)
	for !protocol(g).Stalled() {
		protocol(g).Record(false, admit.Overloaded)
	}
	return g
}

func TestServedOverloadSaysRepeat(t *testing.T) {
	ctx, s := serve(0)
	err := retry.Do(ctx, func(context.Context) error { return context.DeadlineExceeded }, fast.WithGuard(stalledGuard()))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.True(t, s.Pushback(), "every attempt timed out, and so did the guard's last 16")
}

// TestServedOverloadByChanceSaysRetry: one call whose attempts all met
// overload, at a dependency the guard still finds healthy, is bad luck: a
// dependency that sheds a third of its requests at random meets four in a
// row about once in 81 calls, and a retry upstream would most likely
// succeed.
func TestServedOverloadByChanceSaysRetry(t *testing.T) {
	g := policy.NewGuard(50, 1)
	ctx, s := serve(0)
	err := retry.Do(ctx, func(context.Context) error { return context.DeadlineExceeded }, fast.WithGuard(g))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.False(t, protocol(g).Stalled())
	require.False(t, s.Pushback(), "the guard sees a healthy dependency")

	// A guard drained below half by overload mixed with answers, as a
	// dependency that sheds a third of its requests at random can leave
	// it, is not stalled: the next call's four overloaded attempts are
	// still bad luck.
	low := policy.NewGuard(50, 1)
	for protocol(low).Tokens() > 20 {
		protocol(low).Record(false, admit.Overloaded)
		protocol(low).Record(false, admit.Succeeded)
		protocol(low).Record(true, admit.Overloaded)
	}
	ctx, s = serve(0)
	_ = retry.Do(ctx, func(context.Context) error { return context.DeadlineExceeded }, fast.WithGuard(low))
	require.False(t, s.Pushback(), "a guard low on tokens, but with answers among its attempts")

	ctx, s = serve(0)
	_ = retry.Do(ctx, func(context.Context) error { return context.DeadlineExceeded }, fast)
	require.False(t, s.Pushback(), "without a guard, nothing corroborates one call's overload")
}

func TestServedEmptyGuardSaysRepeat(t *testing.T) {
	g := policy.NewGuard(1, 1)
	p := fast.WithGuard(g)
	ctx, s := serve(0)
	_ = retry.Do(ctx, func(context.Context) error { return errFlaky }, p)
	require.Less(t, protocol(g).Tokens(), 1.0)
	require.True(t, s.Pushback(), "the guard has no token left: retries to it do not pay off")
}

func TestServedThrottledSaysRepeat(t *testing.T) {
	g := policy.NewGuard(1, 1)
	busy(t, g) // not alone in flight, so the guard denies
	drain(g)
	ctx, s := serve(0)
	err := retry.Do(ctx, func(context.Context) error { return errFlaky }, policy.Constant(time.Millisecond).WithMaxAttempts(3).WithGuard(g))
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.True(t, s.Pushback())
}

func TestServedDownstreamPushback(t *testing.T) {
	ctx, s := serve(0)
	g := policy.NewGuard(50, 1)
	n := 0
	err := retry.Do(ctx, func(context.Context) error {
		n++
		return fmt.Errorf("status 503: %w", retry.ErrPushback)
	}, fast.WithGuard(g))
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, retry.ErrPushback, re.Cause)
	require.Equal(t, "retry: stopped after 1 attempt: status 503: retry: the server asked not to retry", err.Error(), "the pushback said once")
	require.Equal(t, 1, n, "a pushback is not retried")
	require.Equal(t, 49.0, protocol(g).Tokens(), "a first try's overload costs a token")
	require.True(t, s.Pushback(), "the downstream's pushback goes upstream")
}

func TestServedRetryMakesOneAttempt(t *testing.T) {
	ctx, s := serve(2)
	require.Equal(t, 2, served.PreviousAttempts(ctx))
	n := 0
	err := retry.Do(ctx, func(context.Context) error { n++; return errFlaky }, fast)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 1, n, "the request is a retry already")
	require.False(t, s.Pushback(), "one failure is no outage")
}

func TestServedLastFailedCallCounts(t *testing.T) {
	ctx, s := serve(0)
	overload := func(context.Context) error { return context.DeadlineExceeded }
	flaky := func(context.Context) error { return errFlaky }
	ok := func(context.Context) error { return nil }
	down := fast.WithGuard(stalledGuard())
	_ = retry.Do(ctx, overload, down)
	require.NoError(t, retry.Do(ctx, ok, fast))
	require.True(t, s.Pushback(), "a later success leaves the failed call's verdict")
	_ = retry.Do(ctx, flaky, fast)
	require.False(t, s.Pushback(), "the call that failed last counts")
	_ = retry.Do(ctx, overload, down)
	require.True(t, s.Pushback())
}

func TestServedCallerCancelledSaysNothing(t *testing.T) {
	ctx, s := serve(0)
	ctx, cancel := context.WithCancel(ctx)
	err := retry.Do(ctx, func(context.Context) error { cancel(); return context.DeadlineExceeded }, policy.Constant(time.Hour).WithMaxAttempts(4))
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, s.Pushback())
}

func TestServedEmptyGuardEndsAtOnce(t *testing.T) {
	g := policy.NewGuard(1, 1)
	drain(g)
	ctx, s := serve(0)
	n := 0
	err := retry.Do(ctx, func(context.Context) error { n++; return errFlaky }, policy.Constant(time.Hour).WithMaxAttempts(4).WithGuard(g))
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.Equal(t, 1, n, "alone in flight, but serving a request: no retry, no wait")
	require.True(t, s.Pushback())
	n = 0
	err = retry.Do(context.Background(), func(context.Context) error { n++; return errFlaky }, policy.Constant(0).WithMaxAttempts(4).WithGuard(g))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 4, n, "a call that serves no request keeps a lone caller's retries")
}

func TestServedHopsOwnFailuresAreRetried(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	ctx, s := serve(1)
	g := policy.NewGuard(1, 1)
	drain(g)
	n := 0
	err := retry.Do(ctx, func(context.Context) error { n++; return refused }, fast.WithGuard(g))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 4, n, "a refused connection reached nothing downstream: retried as the policy says, while serving a retry and with an empty guard")
	require.False(t, s.Pushback(), "the hop's own failure asks no pushback upstream")
}

// TestServedHopsOwnFailuresAreTheServerSidesCall: package retry imports no
// network, so the server side that made the record says which failures
// never reached the dependency. A record without that judge retries none
// of them while serving a retry.
func TestServedHopsOwnFailuresAreTheServerSidesCall(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	ctx, _ := served.Serve(context.Background(), 1, nil)
	n := 0
	err := retry.Do(ctx, func(context.Context) error { n++; return refused }, fast)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 1, n, "no judge of network errors: the refusal counts as an answer")
}

// TestServedRetryStartsNoHedge: a hedged call made while serving a retry
// makes one attempt at a time, as Do does. It starts no hedge beside a
// slow attempt, and retries only what did not reach the dependency.
func TestServedRetryStartsNoHedge(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		name   string
		steps  []step
		starts int
		err    error // nil: the call succeeds
	}{
		{"a slow answer", []step{{after: 50 * time.Millisecond}}, 1, nil},
		{"a slow failed answer", []step{{after: 50 * time.Millisecond, err: errFlaky}}, 1, retry.ErrExhausted},
		{"refused, then a slow answer", []step{{err: refused}, {after: 50 * time.Millisecond}}, 2, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, _ := serve(1)
				a := &attemptPlan{steps: tt.steps}
				var ev events
				p := policy.Constant(time.Millisecond).WithMaxAttempts(4).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
				err := retry.Hedge(ctx, a.op, p, retry.WithHooks(ev.hooks()))
				if tt.err == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tt.err)
				}
				require.Equal(t, tt.starts, a.starts())
				require.Zero(t, ev.dones[0].Hedges)
			})
		})
	}
}
