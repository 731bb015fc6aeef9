package retrygrpc_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

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
	code      codes.Code // the status to end with
	pushback  []string   // values of the pushback trailer, if any
	sendFirst bool       // Watch: send a message before ending with code
	header    bool       // Watch: send a header before ending with code
	hang      bool       // Check: answer only when the call's context ends
}

// health is grpc's health service played by a script: call i follows
// steps[i], and the last step repeats.
type health struct {
	healthpb.UnimplementedHealthServer
	steps []step

	mu       sync.Mutex
	calls    int
	previous []string    // grpc-previous-rpc-attempts of each call, its values joined by commas, "" if absent
	onCall   func(n int) // called at the start of call n (1-based), if set
	services []string    // Watch: the service named by each request
}

func (h *health) next(ctx context.Context) step {
	h.mu.Lock()
	h.calls++
	n := h.calls
	md, _ := metadata.FromIncomingContext(ctx)
	h.previous = append(h.previous, strings.Join(md.Get(retrygrpc.PreviousAttemptsKey), ","))
	s := h.steps[min(n, len(h.steps))-1]
	f := h.onCall
	h.mu.Unlock()
	if f != nil {
		f(n)
	}
	return s
}

func (h *health) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

func (h *health) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.previous...)
}

func (h *health) end(ctx context.Context, s step) error {
	if len(s.pushback) > 0 {
		_ = grpc.SetTrailer(ctx, metadata.MD{retrygrpc.PushbackKey: s.pushback})
	}
	return status.Error(s.code, "scripted "+s.code.String())
}

func (h *health) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s := h.next(ctx)
	if s.hang {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if s.code != codes.OK {
		return nil, h.end(ctx, s)
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *health) Watch(in *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	ctx := stream.Context()
	s := h.next(ctx)
	h.mu.Lock()
	h.services = append(h.services, in.GetService())
	h.mu.Unlock()
	if s.header {
		if err := stream.SendHeader(metadata.Pairs("x-served", "yes")); err != nil {
			return err
		}
	}
	if s.sendFirst || s.code == codes.OK {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
			return err
		}
	}
	if s.code != codes.OK {
		return h.end(ctx, s)
	}
	return nil
}

// serve starts h on loopback TCP and returns a client connection with the
// given dial options (grpc's own retry off), closed when the test ends.
func serve(t *testing.T, h *health, opts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	return serveRetry(t, h, false, opts...)
}

// serveRetry is serve with grpc's own retry left on when grpcRetry is true.
func serveRetry(t *testing.T, h *health, grpcRetry bool, opts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, h)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	if !grpcRetry {
		opts = append(opts, grpc.WithDisableRetry())
	}
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, conn.Close())
		srv.Stop()
		<-served
	})
	return healthpb.NewHealthClient(conn)
}
