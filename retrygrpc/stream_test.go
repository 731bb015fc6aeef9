package retrygrpc_test

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
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

func streaming(t *testing.T, h *health, p policy.Policy, opts ...retrygrpc.Option) (healthpb.HealthClient, *clocktest.Counted) {
	t.Helper()
	clk := clocktest.NewCounted()
	setClock(clk, time.Now())
	c := serve(t, h, grpc.WithStreamInterceptor(retrygrpc.StreamClientInterceptor(p.WithClock(clk), opts...)))
	return c, clk
}

// watch opens Watch and receives until the stream ends, in a goroutine.
// It sends the statuses received, then the error that ended the stream.
type watchResult struct {
	got []healthpb.HealthCheckResponse_ServingStatus
	err error
}

func watch(ctx context.Context, c healthpb.HealthClient) <-chan watchResult {
	done := make(chan watchResult, 1)
	go func() {
		var r watchResult
		in := &healthpb.HealthCheckRequest{Service: "retrykit.Store"}
		s, err := c.Watch(ctx, in)
		in.Service = "changed after sending" // the replay must not see this
		if err != nil {
			r.err = err
			done <- r
			return
		}
		for {
			m, err := s.Recv()
			if err != nil {
				r.err = err
				done <- r
				return
			}
			r.got = append(r.got, m.GetStatus())
		}
	}()
	return done
}

const serving = healthpb.HealthCheckResponse_SERVING

func TestStreamFailedBeforeFirstMessageIsRetried(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.Unavailable, pushback: []string{"1500"}}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	done := watch(t.Context(), c)
	require.Equal(t, time.Second, clk.Step(t))
	require.Equal(t, 1500*time.Millisecond, clk.Step(t), "the pushback of a stream's trailer")
	r := <-done
	require.Equal(t, io.EOF, r.err, "the stream ended with OK")
	require.Equal(t, []healthpb.HealthCheckResponse_ServingStatus{serving}, r.got)
	require.Equal(t, 3, h.count())
	require.Equal(t, []string{"", "1", "2"}, h.seen())
	require.Equal(t, []string{"retrykit.Store", "retrykit.Store", "retrykit.Store"}, h.services, "the request replayed as it was sent")
}

func TestStreamFailedAfterFirstMessageIsNotRetried(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, sendFirst: true}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	r := <-watch(t.Context(), c)
	require.Equal(t, []healthpb.HealthCheckResponse_ServingStatus{serving}, r.got)
	require.Equal(t, codes.Unavailable, status.Code(r.err))
	require.Equal(t, "scripted Unavailable", status.Convert(r.err).Message(), "the server's status as it is")
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamFailedAfterHeaderIsNotRetried(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, header: true}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	r := <-watch(t.Context(), c)
	require.Empty(t, r.got)
	require.Equal(t, codes.Unavailable, status.Code(r.err), "a header commits the stream (A6)")
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamHeaderCallCommits(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK, header: true}}}
	c, _ := streaming(t, h, policy.Constant(time.Second))
	s, err := c.Watch(t.Context(), req)
	require.NoError(t, err)
	md, err := s.Header()
	require.NoError(t, err)
	require.Equal(t, []string{"yes"}, md.Get("x-served"))
	m, err := s.Recv()
	require.NoError(t, err)
	require.Equal(t, serving, m.GetStatus())
	_, err = s.Recv()
	require.Equal(t, io.EOF, err)
	require.NotNil(t, s.Trailer())
}

func TestStreamNotRetriedCode(t *testing.T) {
	h := &health{steps: []step{{code: codes.InvalidArgument}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	r := <-watch(t.Context(), c)
	require.Equal(t, codes.InvalidArgument, status.Code(r.err))
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamPushbackStops(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable, pushback: []string{"-1"}}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	r := <-watch(t.Context(), c)
	require.Equal(t, codes.Unavailable, status.Code(r.err))
	require.ErrorIs(t, r.err, retry.ErrPushback)
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamExhausted(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}}}
	c, clk := streaming(t, h, policy.Constant(time.Second).WithMaxAttempts(2))
	done := watch(t.Context(), c)
	clk.Step(t)
	r := <-done
	require.ErrorIs(t, r.err, retry.ErrExhausted)
	require.Equal(t, codes.Unavailable, status.Code(r.err))
	require.Equal(t, 2, h.count())
}

func TestStreamDeadlineShorterThanNextWait(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(3*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	setClock(clk, time.Now().Add(58*time.Second))
	r := <-watch(ctx, c)
	require.Equal(t, codes.DeadlineExceeded, status.Code(r.err))
	var re *retry.Error
	require.ErrorAs(t, r.err, &re)
	require.Equal(t, codes.Unavailable, status.Code(re.Last))
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamWithoutRetry(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	s, err := c.Watch(t.Context(), req, retrygrpc.WithoutRetry())
	require.NoError(t, err)
	_, err = s.Recv()
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamAttemptTimeoutRefused(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK}}}
	c, _ := streaming(t, h, policy.Constant(time.Second).WithAttemptTimeout(time.Second))
	_, err := c.Watch(t.Context(), req)
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.Zero(t, h.count())
}

// flakyCreds are per-call credentials that fail the first fails calls with
// Unavailable: grpc then fails to open the stream at all.
type flakyCreds struct{ fails atomic.Int32 }

func (c *flakyCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if c.fails.Add(-1) >= 0 {
		return nil, status.Error(codes.Unavailable, "credentials not ready")
	}
	return nil, nil
}

func (c *flakyCreds) RequireTransportSecurity() bool { return false }

func TestStreamThatCannotOpenIsRetried(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	creds := &flakyCreds{}
	creds.fails.Store(2)
	done := make(chan error, 1)
	var got []healthpb.HealthCheckResponse_ServingStatus
	go func() {
		s, err := c.Watch(t.Context(), req, grpc.PerRPCCredentials(creds))
		if err != nil {
			done <- err
			return
		}
		for {
			m, err := s.Recv()
			if err != nil {
				done <- err
				return
			}
			got = append(got, m.GetStatus())
		}
	}()
	clk.Step(t)
	clk.Step(t)
	require.Equal(t, io.EOF, <-done)
	require.Equal(t, []healthpb.HealthCheckResponse_ServingStatus{serving}, got)
	require.Equal(t, 1, h.count(), "the failed attempts never reached the server")
	require.Equal(t, []string{"2"}, h.seen())
}

func TestStreamTooLargeToReplayIsCommitted(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}, {code: codes.OK}}}
	c, clk := streaming(t, h, policy.Constant(time.Second))
	s, err := c.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: strings.Repeat("x", retrygrpc.MaxReplay)})
	require.NoError(t, err)
	_, err = s.Recv()
	require.Equal(t, codes.Unavailable, status.Code(err), "a request over MaxReplay cannot be replayed")
	require.Equal(t, 1, h.count())
	require.Zero(t, clk.Waits())
}

func TestStreamInvalidPolicy(t *testing.T) {
	h := &health{steps: []step{{code: codes.OK}}}
	c, _ := streaming(t, h, policy.Constant(-time.Second))
	_, err := c.Watch(t.Context(), req)
	require.Equal(t, codes.Internal, status.Code(err))
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.Zero(t, h.count())
}

func TestStreamRecvAfterItGaveUpOpensNoAttempt(t *testing.T) {
	h := &health{steps: []step{{code: codes.Unavailable}}}
	c, _ := streaming(t, h, policy.Constant(0).WithMaxAttempts(2))
	s, err := c.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "retrykit.Store"})
	require.NoError(t, err)
	_, first := s.Recv()
	require.ErrorIs(t, first, retry.ErrExhausted)
	require.Equal(t, 2, h.count())
	for range 3 {
		_, err := s.Recv()
		require.Equal(t, first, err, "the same error every time")
	}
	require.Equal(t, 2, h.count(), "no attempt after the stream gave up")
}
