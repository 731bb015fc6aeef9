package retrygrpctest_test

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"

	"github.com/retrykit/retrykit/retrytest"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// watched is how many messages the test service's Watch sends.
const watched = 3

// service is grpc's health service answering well: Check serves, and Watch
// sends watched messages and ends. It counts the calls that reach it.
type service struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int32
}

func (s *service) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s.calls.Add(1)
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *service) Watch(_ *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	s.calls.Add(1)
	for range watched {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
			return err
		}
	}
	return nil
}

// serve starts a real gRPC server with the service and the given server
// options, and returns a client dialled with the given dial options (grpc's
// own retry off). With inMemory, they talk over bufconn, which a
// testing/synctest bubble can run; otherwise over loopback TCP. Both are
// stopped when the test ends.
func serve(t *testing.T, inMemory bool, sopts []grpc.ServerOption, dopts ...grpc.DialOption) (healthpb.HealthClient, *service) {
	t.Helper()
	svc := &service{}
	srv := grpc.NewServer(sopts...)
	healthpb.RegisterHealthServer(srv, svc)
	var lis net.Listener
	target := "passthrough:///bufnet"
	if inMemory {
		buf := bufconn.Listen(1 << 20)
		lis = buf
		dopts = append(dopts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return buf.DialContext(ctx) }))
	} else {
		var err error
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		target = "passthrough:///" + lis.Addr().String()
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	dopts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry()}, dopts...)
	conn, err := grpc.NewClient(target, dopts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-served
	})
	return healthpb.NewHealthClient(conn), svc
}

// mustNew returns the injector of p.
func mustNew(t *testing.T, p retrytest.Plan) *retrytest.Injector {
	t.Helper()
	in, err := retrytest.New(p)
	require.NoError(t, err)
	t.Cleanup(in.Close)
	return in
}

// watchAll opens Watch and receives until it ends: how many messages came,
// and the error that ended it (nil for a clean end).
func watchAll(ctx context.Context, c healthpb.HealthClient) (int, error) {
	s, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		if _, err := s.Recv(); err != nil {
			if err == io.EOF {
				err = nil
			}
			return n, err
		}
		n++
	}
}
