package retrygrpc_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
)

// midHop is a health service whose Check and Watch call a downstream
// health service on the call's context, and fail when it fails, or answer
// SERVING when fallback is set.
type midHop struct {
	healthpb.UnimplementedHealthServer
	down     healthpb.HealthClient
	fallback bool
	calls    atomic.Int32
}

func (m *midHop) call(ctx context.Context) error {
	m.calls.Add(1)
	_, err := m.down.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil && !m.fallback {
		return status.Error(codes.Unavailable, "downstream unavailable")
	}
	return nil
}

func (m *midHop) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := m.call(ctx); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (m *midHop) Watch(_ *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	if err := m.call(stream.Context()); err != nil {
		return err
	}
	return stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// serveHop starts srv on loopback TCP behind the server interceptors and
// returns a connection to it with opts.
func serveHop(t *testing.T, srv healthpb.HealthServer, opts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer(grpc.UnaryInterceptor(retrygrpc.UnaryServerInterceptor()), grpc.StreamInterceptor(retrygrpc.StreamServerInterceptor()))
	healthpb.RegisterHealthServer(s, srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, conn.Close())
		s.Stop()
		<-done
	})
	return healthpb.NewHealthClient(conn)
}

var hopPolicy = policy.Constant(0).WithMaxAttempts(4)

// retrying returns the dial options of a retrykit client under p.
func retrying(p policy.Policy) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDisableRetry(),
		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)),
		grpc.WithChainStreamInterceptor(retrygrpc.StreamClientInterceptor(p))}
}

// grpcRetry is a service config whose retryPolicy makes 4 attempts.
const grpcRetry = `{"methodConfig":[{"name":[{"service":"grpc.health.v1.Health"}],
 "retryPolicy":{"maxAttempts":4,"initialBackoff":"0.001s","maxBackoff":"0.001s","backoffMultiplier":1,"retryableStatusCodes":["UNAVAILABLE"]}}]}`

// leafDown returns a health service that always fails Unavailable.
func leafDown(t *testing.T) (*health, healthpb.HealthClient) {
	h := &health{steps: []step{{code: codes.Unavailable}}}
	return h, serve(t, h)
}

func TestServerPushbackStopsGRPCRetry(t *testing.T) {
	leafH, _ := leafDown(t)
	// The mid's guard of one token is empty after the first failed call:
	// retries to the leaf do not pay off.
	down := serveRetry(t, leafH, false, retrying(hopPolicy.WithGuard(policy.NewGuard(1, 1)))...)
	mid := &midHop{down: down}
	c := serveHop(t, mid, grpc.WithDefaultServiceConfig(grpcRetry))
	var trailer metadata.MD
	_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, []string{"-1"}, trailer.Get(retrygrpc.PushbackKey))
	require.EqualValues(t, 1, mid.calls.Load(), "grpc-go's retry policy stopped on the pushback")
	require.Equal(t, "downstream unavailable", status.Convert(err).Message(), "the status as the handler made it: no detail added")
}

func TestServerGRPCRetryWithoutSignal(t *testing.T) {
	leafH, _ := leafDown(t)
	down := serveRetry(t, leafH, false, retrying(hopPolicy)...) // no guard: nothing says an outage
	mid := &midHop{down: down}
	c := serveHop(t, mid, grpc.WithDefaultServiceConfig(grpcRetry))
	var trailer metadata.MD
	_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Empty(t, trailer.Get(retrygrpc.PushbackKey))
	require.EqualValues(t, 4, mid.calls.Load(), "grpc-go retried the mid")
	require.Equal(t, 4+3, leafH.count(), "the mid serving a retry makes one attempt")
	require.Equal(t, []string{"", "1", "2", "3", "1", "2", "3"}, leafH.seen(), "the mid's own retries, then one attempt for each retry it serves")
}

func TestServerPushbackReachesRetrykitClient(t *testing.T) {
	leafH, _ := leafDown(t)
	down := serveRetry(t, leafH, false, retrying(hopPolicy.WithGuard(policy.NewGuard(1, 1)))...)
	mid := &midHop{down: down}
	g := policy.NewGuard(50, 1)
	c := serveHop(t, mid, retrying(hopPolicy.WithGuard(g))...)
	_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{})
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.ErrorIs(t, err, retry.ErrPushback)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 1, re.Attempts)
	require.Equal(t, 49.0, protocol(g).Tokens(), "the guard counts the pushback as overload")

	stream, err := c.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = stream.Recv()
	require.ErrorIs(t, err, retry.ErrPushback, "the stream interceptor pushes back too")
	require.EqualValues(t, 2, mid.calls.Load())
}

func TestServerNoSignal(t *testing.T) {
	for name, tc := range map[string]struct {
		fallback bool
		down     []grpc.DialOption
	}{
		"fallback":         {fallback: true, down: retrying(hopPolicy.WithGuard(policy.NewGuard(1, 1)))},
		"partial failure":  {down: retrying(hopPolicy.WithGuard(policy.NewGuard(50, 1)))},
		"without retrykit": {down: []grpc.DialOption{grpc.WithDisableRetry()}},
	} {
		t.Run(name, func(t *testing.T) {
			leafH, _ := leafDown(t)
			mid := &midHop{down: serveRetry(t, leafH, false, tc.down...), fallback: tc.fallback}
			c := serveHop(t, mid)
			var trailer metadata.MD
			_, _ = c.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
			require.Empty(t, trailer.Get(retrygrpc.PushbackKey))
		})
	}
}

func TestServerHopsOwnFailureRetried(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // connections are refused
	conn, err := grpc.NewClient("passthrough:///"+addr, append(retrying(hopPolicy), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	defer conn.Close()
	_, err = healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.NotErrorIs(t, err, retry.ErrPushback)
}

// dialHop is a health service whose Check dials addr through retry.Do on
// the call's context, and fails when every attempt failed.
type dialHop struct {
	healthpb.UnimplementedHealthServer
	addr     string
	attempts atomic.Int32
}

func (d *dialHop) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	err := retry.Do(ctx, func(context.Context) error {
		d.attempts.Add(1)
		c, err := net.Dial("tcp", d.addr)
		if err == nil {
			c.Close()
		}
		return err
	}, hopPolicy)
	if err != nil {
		return nil, status.Error(codes.Unavailable, "downstream unreachable")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// TestServerServingARetryRetriesUnreached: while the interceptor serves a
// retry, a call whose attempts never reach the dependency (a refused dial)
// is still retried as its policy says. Package retry imports no network:
// the interceptor tells it which failures are the hop's own.
func TestServerServingARetryRetriesUnreached(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hop := &dialHop{addr: lis.Addr().String()}
	require.NoError(t, lis.Close()) // connections are refused
	c := serveHop(t, hop)
	ctx := metadata.AppendToOutgoingContext(t.Context(), retrygrpc.PreviousAttemptsKey, "1")
	var trailer metadata.MD
	_, err = c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.EqualValues(t, 4, hop.attempts.Load(), "a refused dial is the hop's own failure: retried while serving a retry")
	require.Empty(t, trailer.Get(retrygrpc.PushbackKey))
}
