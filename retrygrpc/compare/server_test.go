package compare

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/retrygrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// step is what the scripted server does with one call.
type step struct {
	code      codes.Code
	pushback  string // the pushback trailer's value, if not empty
	sendFirst bool   // Watch: one message before ending with code
}

// health plays grpc's health service by a script (the last step repeats)
// and records when each call arrived.
type health struct {
	healthpb.UnimplementedHealthServer
	steps []step

	mu    sync.Mutex
	times []time.Time
}

func (h *health) next() step {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.times = append(h.times, time.Now())
	return h.steps[min(len(h.times), len(h.steps))-1]
}

func (h *health) calls() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.times...)
}

func (h *health) end(ctx context.Context, s step) error {
	if s.pushback != "" {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(retrygrpc.PushbackKey, s.pushback))
	}
	return status.Error(s.code, "scripted "+s.code.String())
}

func (h *health) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if s := h.next(); s.code != codes.OK {
		return nil, h.end(ctx, s)
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *health) Watch(_ *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	s := h.next()
	if s.sendFirst || s.code == codes.OK {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
			return err
		}
	}
	if s.code != codes.OK {
		return h.end(stream.Context(), s)
	}
	return nil
}

// serve starts h on loopback TCP and returns a client whose connection has
// the given options (grpc's own retry off), closed when tb ends.
func serve(tb testing.TB, h healthpb.HealthServer, opts ...grpc.DialOption) healthpb.HealthClient {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, h)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry()}, opts...)
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), opts...)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		require.NoError(tb, conn.Close())
		srv.Stop()
		<-served
	})
	return healthpb.NewHealthClient(conn)
}
