package retrygrpc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// The gRPC chain of retry at one layer: client → edge → mid → leaf, every
// hop retrying under the policy of internal/layers with a guard of its
// own, every server behind the server interceptors when signal is set. It
// runs inside a testing/synctest bubble, on bufconn listeners.

// layerLeaf fails every call while down, and a third of them at random while
// partial.
type layerLeaf struct {
	healthpb.UnimplementedHealthServer
	down, partial atomic.Bool
	calls         atomic.Int64
}

func (l *layerLeaf) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	l.calls.Add(1)
	if l.down.Load() || (l.partial.Load() && rand.IntN(3) == 0) {
		return nil, status.Error(codes.Unavailable, "down")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// layerHop forwards each Check downstream on the call's context.
type layerHop struct {
	healthpb.UnimplementedHealthServer
	down healthpb.HealthClient
}

func (h *layerHop) Check(ctx context.Context, r *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if _, err := h.down.Check(ctx, r); err != nil {
		return nil, status.Error(codes.Unavailable, "unavailable")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// layerPolicy is every hop's policy, as in internal/layers, with a guard of
// its own.
func layerPolicy() policy.Policy {
	return policy.Exponential(10 * time.Millisecond).WithCap(100 * time.Millisecond).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxAttempts(4).WithAttemptTimeout(time.Second).
		WithGuard(policy.NewGuard(50, 1))
}

// startLayer serves srv on a bufconn listener, behind the server
// interceptors when signal is set, and returns a retrying client of it.
func startLayer(t *testing.T, srv healthpb.HealthServer, signal bool) healthpb.HealthClient {
	lis := bufconn.Listen(1 << 20)
	var opts []grpc.ServerOption
	if signal {
		opts = append(opts, grpc.UnaryInterceptor(retrygrpc.UnaryServerInterceptor()))
	}
	s := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	p := layerPolicy()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry(),
		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		s.Stop()
	})
	return healthpb.NewHealthClient(conn)
}

// layerChain starts leaf, mid and edge, and returns the user's client.
func layerChain(t *testing.T, leaf *layerLeaf, signal bool) healthpb.HealthClient {
	mid := startLayer(t, leaf, signal)
	edge := startLayer(t, &layerHop{down: mid}, signal)
	return startLayer(t, &layerHop{down: edge}, signal)
}

// grpcLayers is one mode's measures of the gRPC chain.
type grpcLayers struct {
	attempts []int64 // leaf-down: the leaf's calls for each of 20 sequential requests
	p99      time.Duration
	partial  float64 // the share of 1,000 sequential requests that succeed with the leaf failing a third
	lateFail int     // leaf down from 1 s to 11 s: requests started after its return that failed
}

func runGRPCLayers(t *testing.T, signal bool) grpcLayers {
	var r grpcLayers
	synctest.Test(t, func(t *testing.T) {
		leaf := &layerLeaf{}
		user := layerChain(t, leaf, signal)
		leaf.down.Store(true)
		var times []time.Duration
		for range 20 {
			before, start := leaf.calls.Load(), time.Now()
			_, _ = user.Check(t.Context(), &healthpb.HealthCheckRequest{})
			times = append(times, time.Since(start))
			r.attempts = append(r.attempts, leaf.calls.Load()-before)
		}
		slices.Sort(times)
		r.p99 = times[len(times)*99/100]
	})
	synctest.Test(t, func(t *testing.T) {
		leaf := &layerLeaf{}
		leaf.partial.Store(true)
		user := layerChain(t, leaf, signal)
		ok := 0
		for range 1000 {
			if _, err := user.Check(t.Context(), &healthpb.HealthCheckRequest{}); err == nil {
				ok++
			}
		}
		r.partial = float64(ok) / 1000
	})
	synctest.Test(t, func(t *testing.T) {
		leaf := &layerLeaf{}
		user := layerChain(t, leaf, signal)
		start := time.Now()
		for time.Since(start) < 13*time.Second {
			at := time.Since(start)
			leaf.down.Store(at >= time.Second && at < 11*time.Second)
			_, err := user.Check(t.Context(), &healthpb.HealthCheckRequest{})
			if err != nil && at >= 11*time.Second {
				r.lateFail++
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return r
}

func mean(a []int64) float64 {
	var n int64
	for _, v := range a {
		n += v
	}
	return float64(n) / float64(len(a))
}

func TestLayersGRPC(t *testing.T) {
	one, every := runGRPCLayers(t, true), runGRPCLayers(t, false)
	t.Logf("gRPC one layer: leaf attempts %v (most %d, mean %.2f), p99 %v, partial success %.2f %%, failures after the leaf's return %d",
		one.attempts, slices.Max(one.attempts), mean(one.attempts), one.p99, 100*one.partial, one.lateFail)
	t.Logf("gRPC every layer: leaf attempts %v (most %d, mean %.2f), p99 %v, partial success %.2f %%, failures after the leaf's return %d",
		every.attempts, slices.Max(every.attempts), mean(every.attempts), every.p99, 100*every.partial, every.lateFail)
	require.LessOrEqual(t, slices.Max(one.attempts), int64(10))
	require.LessOrEqual(t, mean(one.attempts), 5.0)
	require.Greater(t, mean(every.attempts), 10.0, "the scenario can fail")
	require.LessOrEqual(t, one.p99, every.p99/2)
	require.GreaterOrEqual(t, one.partial, every.partial-0.001, fmt.Sprint("partial failure rescued: ", one.partial))
	require.Zero(t, one.lateFail, "every request after the leaf's return succeeds")
}
