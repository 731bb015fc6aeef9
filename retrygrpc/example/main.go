// Command example retries gRPC calls with retrygrpc's interceptors: a
// loopback server plays grpc's health service, made flaky (Unavailable
// twice, once with a pushback trailer, then SERVING), and the client prints
// each attempt. A Watch stream that fails before its first message is
// retried too; one that fails after it is not.
//
//	go run ./retrygrpc/example
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrygrpc"
)

// flaky answers Unavailable to the first two calls of each method (the
// second with a 500 ms pushback), then SERVING.
type flaky struct {
	healthpb.UnimplementedHealthServer
	checks, watches atomic.Int32
}

func answer(ctx context.Context, n int32, what string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	fmt.Printf("  server: %s call %d, %s=%q\n", what, n, retrygrpc.PreviousAttemptsKey, md.Get(retrygrpc.PreviousAttemptsKey))
	switch n {
	case 1:
		return status.Error(codes.Unavailable, "warming up")
	case 2:
		_ = grpc.SetTrailer(ctx, metadata.Pairs(retrygrpc.PushbackKey, "500"))
		return status.Error(codes.Unavailable, "overloaded, come back in 500ms")
	}
	return nil
}

func (f *flaky) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := answer(ctx, f.checks.Add(1), "Check"); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (f *flaky) Watch(_ *healthpb.HealthCheckRequest, s grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	if err := answer(s.Context(), f.watches.Add(1), "Watch"); err != nil {
		return err
	}
	// One message, then a failure: the stream is committed, so the
	// failure reaches the caller instead of a replay.
	if err := s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
		return err
	}
	return status.Error(codes.Unavailable, "going away")
}

func main() {
	log.SetFlags(0)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, &flaky{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	p := policy.Exponential(100 * time.Millisecond).WithCap(2 * time.Second).WithMaxAttempts(5).
		WithJitter(backoff.Jitter{Kind: backoff.Equal})
	hooks := retrygrpc.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			why := "the schedule"
			if e.Hinted {
				why = "the server's pushback"
			}
			fmt.Printf("  client: attempt %d: %v; waiting %v, from %s\n", e.Attempt, status.Code(e.Err), e.Delay.Round(time.Millisecond), why)
		},
	}))
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(), // one retry layer: retrygrpc's
		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p, hooks)),
		grpc.WithChainStreamInterceptor(retrygrpc.StreamClientInterceptor(p, hooks)),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Printf("policy: %v\n", p)

	fmt.Println("unary Check:")
	start := time.Now()
	resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("  result: %v after %v\n", resp.GetStatus(), time.Since(start).Round(10*time.Millisecond))

	fmt.Println("stream Watch:")
	stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			fmt.Printf("  stream ended: %v (after the first message: not retried)\n", status.Code(err))
			break
		}
		fmt.Printf("  received: %v\n", m.GetStatus())
	}
}
