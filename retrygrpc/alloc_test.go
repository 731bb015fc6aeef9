//go:build !race

package retrygrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// TestUnaryFirstTryAllocsNothing: around an invoker that succeeds at once,
// the interceptor itself allocates nothing (what grpc's invoker does with
// the trailer option is grpc's; see BENCHMARKS.md).
func TestUnaryFirstTryAllocsNothing(t *testing.T) {
	ic := retrygrpc.UnaryClientInterceptor(policy.Exponential(100 * time.Millisecond).WithCap(time.Second).WithMaxAttempts(3))
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := context.Background()
	reply := new(healthpb.HealthCheckResponse)
	opts := []grpc.CallOption{grpc.StaticMethod()}
	allocs := testing.AllocsPerRun(1000, func() {
		require.NoError(t, ic(ctx, healthpb.Health_Check_FullMethodName, req, reply, nil, invoker, opts...))
	})
	require.Zero(t, allocs, "allocations per first-try call")
}
