package compare

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// serving answers every Check at once.
type serving struct {
	healthpb.UnimplementedHealthServer
}

var servingResp = &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}

func (serving) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return servingResp, nil
}

// BenchmarkUnary is one unary call on loopback that succeeds at once: with
// no interceptor (the floor), and through each library's retrying
// interceptor set to at most 3 attempts. The difference to the floor is what
// the first try costs. Compare with benchstat, -col /lib.
func BenchmarkUnary(b *testing.B) {
	s := setup{attempts: 3, base: 100 * time.Millisecond, cap: time.Second, jitter: 0.2}
	run := func(b *testing.B, opts ...grpc.DialOption) {
		c := serve(b, serving{}, opts...)
		ctx := context.Background()
		if _, err := c.Check(ctx, req); err != nil { // connect outside the timing
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Check(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("lib=none", func(b *testing.B) { run(b) })
	for _, l := range libs {
		b.Run("lib="+l.name, func(b *testing.B) { run(b, grpc.WithUnaryInterceptor(l.unary(s, nil))) })
	}
}

// BenchmarkInterceptor is the interceptor alone, around an invoker that
// succeeds at once without touching the network: what each library adds to
// a call, without the loopback round trip's noise. It does not count what an
// interceptor's call options cost inside grpc (retrykit's trailer option
// makes grpc copy the trailer: one allocation, seen in BenchmarkUnary).
func BenchmarkInterceptor(b *testing.B) {
	s := setup{attempts: 3, base: 100 * time.Millisecond, cap: time.Second, jitter: 0.2}
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := context.Background()
	reply := new(healthpb.HealthCheckResponse)
	opts := []grpc.CallOption{grpc.StaticMethod()} // what generated clients pass
	b.Run("lib=none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := invoker(ctx, healthpb.Health_Check_FullMethodName, req, reply, nil, opts...); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, l := range libs {
		ic := l.unary(s, nil)
		b.Run("lib="+l.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := ic(ctx, healthpb.Health_Check_FullMethodName, req, reply, nil, invoker, opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
