package otelsuite_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

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
	"github.com/retrykit/retrykit/retrytest"
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

// A hedged HTTP request through retryhttp has a span for the first attempt
// and one for the hedge, each over its own otelhttp client span. The
// hedge's client span has a resend count of 1, and the first attempt's,
// cancelled when the hedge won, none.
func TestAttemptSpansOfAHedgedRequestThroughRetryHTTP(t *testing.T) {
	entered := make(chan struct{})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			close(entered)
			<-r.Context().Done() // slow, until the hedge wins and the client lets go
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	rec, _ := newRecorder(t)
	tr := newTracing(t)
	ended := make(chan struct{}, 2)
	after := retry.Hooks{OnAttemptDone: func(context.Context, retry.AttemptEvent) { ended <- struct{}{} }}
	clk := retrytest.NewClock()
	p := policy.Constant(time.Second).WithMaxAttempts(3).WithClock(clk).WithHedging(policy.Hedging{Delay: time.Second})
	inner := otelhttp.NewTransport(retryotel.ResendCount(srv.Client().Transport), otelhttp.WithTracerProvider(tr.tp))
	rt, err := retryhttp.New(inner, p, retryhttp.WithRetryOptions(retry.WithHooks(rec.Hooks()), retry.WithHooks(&after)))
	require.NoError(t, err)
	defer rt.CloseIdleConnections()

	body := make(chan string, 1)
	go func() {
		defer close(body)
		ctx, span := tr.start(t.Context(), "call")
		defer span.End()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		body <- string(b)
	}()
	<-entered
	require.Equal(t, time.Second, clk.Step(t), "the hedge delay")
	require.Equal(t, "ok", <-body)
	<-ended // both attempts returned, the Recorder told of each before after
	<-ended
	lines := tr.tree("retry.attempt", "retry.hedge", "retry.delay", resendKey)
	require.Equal(t, []string{
		"call",
		"  retry.attempt retry.attempt=1,retry.delay=0,retry.hedge=false [error: context canceled]",
		"    HTTP GET [error: context canceled]",
		"  retry.attempt retry.attempt=2,retry.delay=1,retry.hedge=true",
		"    HTTP GET http.request.resend_count=1",
	}, lines)
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
