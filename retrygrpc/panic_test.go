package retrygrpc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// guarded is a unary call and a stream open through interceptors whose
// policy has a guard of its own.
type guarded struct {
	unary  grpc.UnaryClientInterceptor
	stream grpc.StreamClientInterceptor
}

func (c guarded) call(ctx context.Context, invoker grpc.UnaryInvoker) {
	_ = c.unary(ctx, healthpb.Health_Check_FullMethodName, req, new(healthpb.HealthCheckResponse), nil, invoker)
}

func (c guarded) open(streamer grpc.Streamer) {
	_, _ = c.stream(context.Background(), &grpc.StreamDesc{ServerStreams: true}, nil, healthpb.Health_Watch_FullMethodName, streamer)
}

func TestPanicOrCancelLeavesNoCallInFlight(t *testing.T) {
	// The guard counts the calls in flight from the first attempt to the
	// end. Every way a call can end must lower the count again. A stalled
	// guard shows a raised count: it holds new calls back once more than
	// 16 are in flight.
	const calls = 20 // more than the 16 a stalled guard lets be in flight
	down := status.Error(codes.Unavailable, "down")
	for name, run := range map[string]func(c guarded){
		"a first attempt panics": func(c guarded) {
			c.call(context.Background(), func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				panic("invoker")
			})
		},
		"a retry panics": func(c guarded) {
			n := 0
			c.call(context.Background(), func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				if n++; n > 1 {
					panic("invoker")
				}
				return down
			})
		},
		"the call is cancelled": func(c guarded) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.call(ctx, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				cancel()
				return status.Error(codes.Canceled, "cancelled")
			})
		},
		"a stream's retry panics": func(c guarded) {
			n := 0
			c.open(func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				if n++; n > 1 {
					panic("streamer")
				}
				return nil, down
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := policy.NewGuard(50, 1)
			p := policy.Constant(0).WithMaxAttempts(3).WithGuard(g)
			c := guarded{unary: retrygrpc.UnaryClientInterceptor(p), stream: retrygrpc.StreamClientInterceptor(p)}
			for range calls {
				func() {
					defer func() { _ = recover() }() // the caller recovers and goes on
					run(c)
				}()
			}
			for range 16 {
				protocol(g).Record(false, admit.Overloaded)
			}
			require.True(t, protocol(g).Stalled())
			for range 15 { // room for 15 more attempts and one: none stayed running
				protocol(g).Run()
			}
			require.False(t, protocol(g).Held(), "an attempt ended and stayed running")
			for range 15 {
				protocol(g).Leave()
			}
		})
	}
}

// protocol returns g with the protocol that retrykit's packages drive.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }
