// Command retrygrpc uses the retrygrpc module as a user does after
// `go get github.com/retrykit/retrykit/retrygrpc`: a client connection
// whose unary calls retry under a policy, against a real gRPC health server
// on a loopback port that answers Unavailable twice before it serves.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// flakyHealth fails its first two checks with Unavailable.
type flakyHealth struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int32
}

func (h *flakyHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if h.calls.Add(1) < 3 {
		return nil, status.Error(codes.Unavailable, "warming up")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	health := &flakyHealth{}
	healthpb.RegisterHealthServer(srv, health)
	go srv.Serve(lis)
	defer srv.Stop()

	p := policy.Constant(time.Millisecond).WithMaxAttempts(5)
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)),
	)
	if err != nil {
		return err
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING || health.calls.Load() != 3 {
		return fmt.Errorf("Check = %v after %d calls, want SERVING after 3", resp.GetStatus(), health.calls.Load())
	}
	fmt.Printf("retrygrpc: %v after %d calls\n", resp.GetStatus(), health.calls.Load())
	return nil
}
