package retryotel_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retryotel"
)

// An HTTP request through retryhttp, whose base is otelhttp's Transport on
// ResendCount, has one attempt span for each attempt under the call's span,
// and otelhttp's client span of that attempt under it, with its resend
// count from the second attempt on.
func TestAttemptSpansThroughRetryHTTP(t *testing.T) {
	srv := busyTwice(t)
	rec, _ := newRecorder(t)
	tr := newTracing(t)
	inner := otelhttp.NewTransport(retryotel.ResendCount(srv.Client().Transport), otelhttp.WithTracerProvider(tr.tp))
	rt, err := retryhttp.New(inner, policy.Constant(0).WithMaxAttempts(4), retryhttp.WithRetryOptions(retry.WithHooks(rec.Hooks())))
	require.NoError(t, err)
	defer rt.CloseIdleConnections()

	require.Equal(t, "ok", get(t, &http.Client{Transport: rt}, tr.tp, srv.URL))
	require.Equal(t, []string{
		"call",
		"  retry.attempt retry.attempt=1,retry.hedge=false [error: status 503 Service Unavailable]",
		"    HTTP GET http.response.status_code=503 [error: ]",
		"  retry.attempt retry.attempt=2,retry.hedge=false [error: status 503 Service Unavailable]",
		"    HTTP GET http.request.resend_count=1,http.response.status_code=503 [error: ]",
		"  retry.attempt retry.attempt=3,retry.hedge=false",
		"    HTTP GET http.request.resend_count=2,http.response.status_code=200",
	}, tr.tree("retry.attempt", "retry.hedge", resendKey, "http.response.status_code"))
}

// unavailableTwice is grpc's health service failing its first two checks
// with Unavailable.
type unavailableTwice struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int32
}

func (h *unavailableTwice) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if h.calls.Add(1) <= 2 {
		return nil, status.Error(codes.Unavailable, "not yet")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// A gRPC call through retrygrpc's interceptor, on a client with otelgrpc's
// stats handler, has one attempt span for each attempt under the call's
// span, and otelgrpc's client span of that attempt under it.
func TestAttemptSpansThroughRetryGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	h := &unavailableTwice{}
	healthpb.RegisterHealthServer(srv, h)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		srv.Stop()
		require.NoError(t, <-served)
	}()

	rec, _ := newRecorder(t)
	tr := newTracing(t)
	cc, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tr.tp))),
		grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(policy.Constant(0).WithMaxAttempts(4),
			retrygrpc.WithRetryOptions(retry.WithHooks(rec.Hooks())))))
	require.NoError(t, err)
	defer func() { require.NoError(t, cc.Close()) }()

	ctx, span := tr.start(t.Context(), "call")
	resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	span.End()
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	require.EqualValues(t, 3, h.calls.Load())
	require.Equal(t, []string{
		"call",
		"  retry.attempt retry.attempt=1,retry.hedge=false [error: rpc error: code = Unavailable desc = not yet]",
		"    grpc.health.v1.Health/Check rpc.response.status_code=UNAVAILABLE [error: not yet]",
		"  retry.attempt retry.attempt=2,retry.hedge=false [error: rpc error: code = Unavailable desc = not yet]",
		"    grpc.health.v1.Health/Check rpc.response.status_code=UNAVAILABLE [error: not yet]",
		"  retry.attempt retry.attempt=3,retry.hedge=false",
		"    grpc.health.v1.Health/Check rpc.response.status_code=OK",
	}, tr.tree("retry.attempt", "retry.hedge", attribute.Key("rpc.response.status_code")))
}
