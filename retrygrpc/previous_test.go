package retrygrpc_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/retrygrpc"
)

// forwardHop is a health service whose Check calls a downstream health
// service on the call's context, and fails when it fails. It keeps the
// grpc-previous-rpc-attempts values of each call it serves. With forward
// set, the call downstream carries the incoming metadata, as a hop that
// passes its request headers on does.
type forwardHop struct {
	healthpb.UnimplementedHealthServer
	down    healthpb.HealthClient
	forward bool

	mu       sync.Mutex
	previous []string // each call's values, joined by commas, "" if absent
}

func (f *forwardHop) Check(ctx context.Context, r *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.previous = append(f.previous, strings.Join(md.Get(retrygrpc.PreviousAttemptsKey), ","))
	f.mu.Unlock()
	if f.forward {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	if _, err := f.down.Check(ctx, r); err != nil {
		return nil, status.Error(codes.Unavailable, "downstream unavailable")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (f *forwardHop) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.previous...)
}

func TestForwardedMetadataCarriesOnePreviousAttempts(t *testing.T) {
	// user → middle → leaf → store, every hop retrying under hopPolicy's
	// 4 attempts, the middle forwarding its incoming metadata to the leaf.
	const attempts = 4
	// The user's first attempt: the middle's 4 attempts, the first of
	// which the leaf retries in full and the others once each. The user's
	// 3 retries: one attempt at every layer.
	const wantStore = attempts + (attempts - 1) + (attempts - 1)
	store := &health{steps: []step{{code: codes.Unavailable}}}
	leaf := &forwardHop{down: serve(t, store, retrying(hopPolicy)...)}
	middle := &forwardHop{down: serveHop(t, leaf, retrying(hopPolicy)...), forward: true}
	user := serveHop(t, middle, retrying(hopPolicy)...)

	_, err := user.Check(t.Context(), &healthpb.HealthCheckRequest{})
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, []string{"", "1", "2", "3"}, middle.seen())
	require.Equal(t, []string{"", "1", "2", "3", "1", "2", "3"}, leaf.seen(),
		"one value on every call: the middle's own count replaces the one it forwards")
	require.Equal(t, wantStore, store.count(), "the attempts of the chain add up")
	require.Equal(t, []string{"", "1", "2", "3", "1", "2", "3", "1", "2", "3"}, store.seen())
}

func TestHugePreviousAttemptsSaturate(t *testing.T) {
	for _, v := range []string{strconv.Itoa(math.MaxInt), "9223372036854775808", "99999999999999999999999999"} {
		t.Run(v, func(t *testing.T) {
			// A caller without the interceptor sends the header itself.
			store := &health{steps: []step{{code: codes.Unavailable}}}
			leaf := &forwardHop{down: serve(t, store, retrying(hopPolicy)...)}
			middle := &forwardHop{down: serveHop(t, leaf, retrying(hopPolicy)...)}
			user := serveHop(t, middle)

			ctx := metadata.AppendToOutgoingContext(t.Context(), retrygrpc.PreviousAttemptsKey, v)
			_, err := user.Check(ctx, &healthpb.HealthCheckRequest{})
			require.Equal(t, codes.Unavailable, status.Code(err))
			require.Equal(t, []string{strconv.Itoa(math.MaxInt)}, leaf.seen(), "the middle serves a retry: one attempt, at the largest count")
			require.Equal(t, []string{strconv.Itoa(math.MaxInt)}, store.seen(), "and so does the leaf")
		})
	}
}
