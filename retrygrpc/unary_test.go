package retrygrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
)

var req = &healthpb.HealthCheckRequest{}

// unary returns a client whose calls go through the unary interceptor under
// p, and a mock clock (set to the real time, so that real deadlines and
// mock waits can be compared) that p waits on.
func unary(t *testing.T, h *health, p policy.Policy, opts ...retrygrpc.Option) (healthpb.HealthClient, *clocktest.Counted) {
	t.Helper()
	clk := clocktest.NewCounted()
	setClock(clk, time.Now())
	c := serve(t, h, grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p.WithClock(clk), opts...)))
	return c, clk
}

// setClock moves clk forward to t, a time after the clock's own.
func setClock(clk *clocktest.Counted, t time.Time) { clk.Add(t.Sub(clk.Now())) }

// check runs Check in a goroutine: the test advances the clock meanwhile.
func check(ctx context.Context, c healthpb.HealthClient, opts ...grpc.CallOption) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Check(ctx, req, opts...)
		done <- err
	}()
	return done
}

func TestUnaryFirstTrySucceeds(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(time.Second))
	resp, err := c.Check(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	require.Equal(t, 1, h.count())
	require.Equal(t, []string{""}, h.seen(), "the first attempt carries no previous-attempts header")
	require.Zero(t, clk.Waits())
}

func TestUnaryUnavailableRetriedUntilOK(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Exponential(time.Second))
	done := check(t.Context(), c)
	require.Equal(t, time.Second, clk.Step(t))
	require.Equal(t, 2*time.Second, clk.Step(t))
	require.NoError(t, <-done)
	require.Equal(t, 3, h.count())
	require.Equal(t, []string{"", "1", "2"}, h.seen())
}

func TestUnaryNotRetried(t *testing.T) {
	for _, code := range []codes.Code{codes.InvalidArgument, codes.Internal, codes.ResourceExhausted, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) {
			h := &health{steps: []step{{code: code}, {code: codes.OK}}}
			c, clk := unary(t, h, policy.Constant(time.Second))
			_, err := c.Check(t.Context(), req)
			require.Equal(t, code, status.Code(err))
			require.Equal(t, "scripted "+code.String(), status.Convert(err).Message(), "the server's own status")
			require.Equal(t, 1, h.count())
			require.Zero(t, clk.Waits())
		})
	}
}

func TestUnaryCodesReplaceable(t *testing.T) {
	h := &health{steps: []step{{code: codes.ResourceExhausted}, {code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(time.Second), retrygrpc.WithCodes(codes.ResourceExhausted))
	done := check(t.Context(), c)
	clk.Step(t)
	err := <-done
	require.Equal(t, codes.Unavailable, status.Code(err), "Unavailable is no longer in the set")
	require.Equal(t, 2, h.count())
}

func TestUnaryNoCodesRetriesNothing(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(time.Second), retrygrpc.WithCodes(), nil)
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestUnaryExhausted(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}}}
	c, clk := unary(t, h, policy.Constant(time.Second).WithMaxAttempts(3))
	done := check(t.Context(), c)
	clk.Step(t)
	clk.Step(t)
	err := <-done
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, codes.Unavailable, status.Code(err), "the last status's code")
	st, ok := status.FromError(err)
	require.True(t, ok)
	require.Contains(t, st.Message(), "gave up after 3 attempts")
	require.Contains(t, st.Message(), "scripted Unavailable")
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 3, re.Attempts)
	require.Equal(t, codes.Unavailable, status.Code(re.Last))
	require.Equal(t, 3, h.count())
}

func TestUnaryPushbackWaits(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"3000"}}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(100*time.Millisecond))
	done := check(t.Context(), c)
	d := clk.NextWait(t)
	require.Equal(t, 3*time.Second, d, "the server's pushback, not the schedule's 100ms")
	clk.Add(d - time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Check returned %v before the pushback ran out", err)
	default:
	}
	require.Equal(t, 1, h.count())
	clk.Add(time.Millisecond)
	require.NoError(t, <-done)
	require.Equal(t, 2, h.count())
}

func TestUnaryPushbackStops(t *testing.T) {
	for name, v := range map[string][]string{"negative": {"-1"}, "unparseable": {"soon"}, "two values": {"10", "20"}} {
		t.Run(name, func(t *testing.T) {
			h := &health{steps: []step{{code: codes.Unavailable, pushback: v}, {code: codes.OK}}}
			c, clk := unary(t, h, policy.Constant(time.Second))
			_, err := c.Check(t.Context(), req)
			require.Equal(t, codes.Unavailable, status.Code(err), "the server's code")
			require.Contains(t, status.Convert(err).Message(), "scripted Unavailable")
			require.ErrorIs(t, err, retry.ErrPushback)
			var re *retry.Error
			require.True(t, errors.As(err, &re))
			require.Equal(t, retry.ErrPushback, re.Cause)
			require.Equal(t, 1, re.Attempts)
			require.Equal(t, 1, h.count())
			require.Zero(t, clk.Waits())
		})
	}
}

func TestUnaryPushbackZeroRetriesAtOnce(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"0"}}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(time.Second))
	_, err := c.Check(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, 2, h.count())
	require.Zero(t, clk.Waits())
}

func TestUnaryDeadlineShorterThanNextWait(t *testing.T) {
	for name, s := range map[string]step{
		"schedule": {code: codes.Unavailable},
		"pushback": {code: codes.Unavailable, pushback: []string{"3000"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := &health{steps: []step{s, {code: codes.OK}}}
			c, clk := unary(t, h, policy.Constant(3*time.Second))
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			setClock(clk, time.Now().Add(58*time.Second)) // two seconds of the deadline left
			_, err := c.Check(ctx, req)
			require.Equal(t, codes.DeadlineExceeded, status.Code(err))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Contains(t, status.Convert(err).Message(), "scripted Unavailable")
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			require.Equal(t, codes.Unavailable, status.Code(re.Last), "the last status")
			require.Equal(t, 1, h.count())
			require.Zero(t, clk.Waits(), "no wait started")
			require.NoError(t, ctx.Err(), "returned before the deadline")
		})
	}
}

func TestUnaryCallerCancelNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The server cancels the caller's context, then fails the call: the
	// caller's own cancellation is never retried, whatever the codes.
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}, onCall: func(int) { cancel() }}
	c, clk := unary(t, h, policy.Constant(time.Second), retrygrpc.WithCodes(codes.Unavailable, codes.Canceled, codes.DeadlineExceeded))
	_, err := c.Check(ctx, req)
	require.Equal(t, codes.Canceled, status.Code(err))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestUnaryCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(time.Minute))
	done := check(ctx, c)
	clk.NextWait(t)
	cancel()
	err := <-done
	require.Equal(t, codes.Canceled, status.Code(err))
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, codes.Unavailable, status.Code(re.Last))
	require.Equal(t, 1, h.count())
}

func TestUnaryCallOptions(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}}}
	p := policy.Constant(time.Second)
	c, clk := unary(t, h, p)

	_, err := c.Check(t.Context(), req, retrygrpc.WithoutRetry())
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())

	done := check(t.Context(), c, retrygrpc.WithPolicy(policy.Constant(5*time.Second).WithMaxAttempts(2).WithClock(clk)))
	require.Equal(t, 5*time.Second, clk.Step(t))
	err = <-done
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, 3, h.count())

	// The last of several overrides wins.
	_, err = c.Check(t.Context(), req, retrygrpc.WithPolicy(p), retrygrpc.WithoutRetry())
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, 4, h.count())
}

func TestUnaryInvalidPolicy(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK}}}
	c, _ := unary(t, h, policy.Constant(-time.Second))
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.Zero(t, h.count())
}

func TestUnaryHooksSeeEachRetry(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.Unavailable, pushback: []string{"2500"}}, {code: codes.OK}}}
	var events []retry.RetryEvent
	hooks := &retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { events = append(events, e) }}
	c, clk := unary(t, h, policy.Constant(time.Second), retrygrpc.WithRetryOptions(retry.WithHooks(hooks)))
	done := check(t.Context(), c)
	clk.Step(t)
	clk.Step(t)
	require.NoError(t, <-done)
	require.Len(t, events, 2)
	require.Equal(t, time.Second, events[0].Delay)
	require.False(t, events[0].Hinted)
	require.Equal(t, 2500*time.Millisecond, events[1].Delay)
	require.True(t, events[1].Hinted)
	require.Equal(t, codes.Unavailable, status.Code(events[1].Err))
}

// grpcRetryConfig has grpc retry Unavailable itself, twice per call.
const grpcRetryConfig = `{"methodConfig": [{"name": [{"service": "grpc.health.v1.Health"}],
	"retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
	"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

// TestUnaryGRPCRetryMultiplies shows why the docs say to dial with
// grpc.WithDisableRetry: grpc's own retry runs under each of the
// interceptor's attempts, so the attempts multiply.
func TestUnaryGRPCRetryMultiplies(t *testing.T) {
	for _, tc := range []struct {
		grpcRetry bool
		want      int
	}{{grpcRetry: true, want: 4}, {grpcRetry: false, want: 2}} {
		h := &health{steps: []step{{code: codes.Unavailable}}}
		clk := clocktest.NewCounted()
		p := policy.Constant(time.Second).WithMaxAttempts(2).WithClock(clk)
		c := serveRetry(t, h, tc.grpcRetry,
			grpc.WithDefaultServiceConfig(grpcRetryConfig),
			grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
		done := check(t.Context(), c)
		clk.Step(t)
		require.ErrorIs(t, <-done, retry.ErrExhausted)
		require.Equal(t, tc.want, h.count(), "grpc's retry on: %v", tc.grpcRetry)
	}
}

func TestUnaryAttemptTimeoutRetried(t *testing.T) {
	arrived := make(chan int, 2)
	h := &health{steps: []step{{hang: true}, {code: codes.OK}}, onCall: func(n int) { arrived <- n }}
	c, clk := unary(t, h, policy.Constant(time.Second).WithAttemptTimeout(5*time.Second))
	done := check(t.Context(), c)
	require.Equal(t, 1, <-arrived)
	clk.Add(5 * time.Second) // the first attempt's own deadline passes; the caller's context is live
	require.Equal(t, time.Second, clk.Step(t))
	require.NoError(t, <-done)
	require.Equal(t, 2, <-arrived)
}

func TestUnaryPushbackAboveCapHonoured(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"3000"}}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Exponential(100*time.Millisecond).WithCap(time.Second))
	done := check(t.Context(), c)
	require.Equal(t, 3*time.Second, clk.Step(t), "a server hint is not cut to the cap")
	require.NoError(t, <-done)
	require.Equal(t, 2, h.count())
}

func TestUnaryPushbackAboveHintCeiling(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"3000"}}, {code: codes.OK}}}
	c, clk := unary(t, h, policy.Constant(100*time.Millisecond).WithMaxHint(2*time.Second))
	_, err := c.Check(t.Context(), req)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	require.Equal(t, codes.Unavailable, status.Code(err), "the last status's code")
	require.Contains(t, status.Convert(err).Message(), "hint ceiling")
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits(), "never slept, never shortened")
}

// TestGuardPerConnection: a storm guard is part of the policy, so each
// client connection gets its own by being built with a policy that holds
// it. A dead dependency exhausts its connection's guard; another
// connection's guard still allows retries, unless it is the same guard.
func TestGuardPerConnection(t *testing.T) {
	p := policy.Constant(0).WithMaxAttempts(3)
	dead := &health{steps: []step{{code: codes.Unavailable}}}
	deadGuard := policy.NewGuard(4, 0.5)
	protocol(deadGuard).Start() // another call in flight: one alone keeps its retries
	defer protocol(deadGuard).Done()
	a, _ := unary(t, dead, p.WithGuard(deadGuard))
	// 4 tokens: a first try that fails takes half the ratio, a retry that
	// fails a token. 3 attempts twice (the second's last retry is the
	// guard's probe of this second), then one per call.
	var err error
	for range 4 {
		_, err = a.Check(t.Context(), req)
	}
	require.Equal(t, 3+3+1+1, dead.count())
	require.ErrorIs(t, err, retry.ErrThrottled)
	require.Equal(t, codes.Unavailable, status.Code(err))

	for _, tc := range []struct {
		name  string
		guard *policy.Guard
		want  codes.Code
		calls int
	}{
		{"own guard", policy.NewGuard(10, 0.4), codes.OK, 2},
		{"the dead connection's guard", deadGuard, codes.Unavailable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flaky := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
			b, _ := unary(t, flaky, p.WithGuard(tc.guard))
			_, err := b.Check(t.Context(), req)
			require.Equal(t, tc.want, status.Code(err))
			require.Equal(t, tc.calls, flaky.count())
		})
	}
}

func TestUnaryPolicyPredicateConsulted(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"1000"}}, {code: codes.OK}}}
	never := func(error) bool { return false }
	c, clk := unary(t, h, policy.Constant(time.Second).WithRetryIf(never))
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.Unavailable, status.Code(err))
	st, ok := status.FromError(err)
	require.True(t, ok)
	require.Equal(t, "scripted Unavailable", st.Message(), "the server's status as it was sent")
	require.Equal(t, err.Error(), st.Err().Error(), "not wrapped")
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}
