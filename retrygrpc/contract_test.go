package retrygrpc_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// failing returns an invoker that fails every attempt with Unavailable, and
// the count of its attempts.
func failing() (grpc.UnaryInvoker, *atomic.Int32) {
	var n atomic.Int32
	return func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		n.Add(1)
		return status.Error(codes.Unavailable, "down")
	}, &n
}

// besideACall runs calls through ic, one after another, each failing every
// attempt, while another call through ic is in flight, so that none of them
// is alone in flight (a guard never denies a call alone). It returns the
// attempts the calls made.
func besideACall(t *testing.T, ic grpc.UnaryClientInterceptor, calls int, opts ...grpc.CallOption) int {
	t.Helper()
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	block := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		close(started)
		<-release
		return nil
	}
	go func() { done <- ic(context.Background(), "/svc/Block", req, nil, nil, block) }()
	<-started
	invoker, n := failing()
	for range calls {
		require.Error(t, ic(context.Background(), "/svc/Fail", req, nil, nil, invoker, opts...))
	}
	close(release)
	require.NoError(t, <-done)
	return int(n.Load())
}

// An interceptor whose policy carries no guard makes one of its own,
// policy.NewGuard(50, 1), as retryhttp.New does for a Transport; a guard in
// the policy takes its place and is how interceptors share one.
func TestInterceptorGuardByDefault(t *testing.T) {
	p := policy.Constant(0).WithMaxAttempts(4)
	const calls = 40

	unguarded := besideACall(t, retrygrpc.UnaryClientInterceptor(p.WithGuard(admission.Off)), calls)
	require.Equal(t, 4*calls, unguarded, "no guard: four attempts for every call")

	own := besideACall(t, retrygrpc.UnaryClientInterceptor(p), calls)
	require.Less(t, own, 4*calls, "its own guard denies retries once its tokens are spent")
	require.Greater(t, own, calls+admission.Tokens/2, "every first try, and retries while the tokens last")

	g := policy.NewGuard(10, 1)
	a, b := retrygrpc.UnaryClientInterceptor(p.WithGuard(g)), retrygrpc.UnaryClientInterceptor(p.WithGuard(g))
	besideACall(t, a, calls)
	require.InDelta(t, 1, protocol(g).Tokens(), 1e-9, "a's failures spent the guard in the policy, all but the ratio its blocked call added at the end")
	require.LessOrEqual(t, besideACall(t, b, 1), 2, "b shares it: its retries are denied, all but the probe of a second that may have passed")

	fresh := retrygrpc.UnaryClientInterceptor(p)
	require.Equal(t, 4, besideACall(t, fresh, 1), "another interceptor has a full guard of its own")
}

// A call with a policy of its own keeps the interceptor's guard, unless its
// policy brings one.
func TestCallPolicyKeepsTheInterceptorsGuard(t *testing.T) {
	own, other := policy.NewGuard(10, 1), policy.NewGuard(10, 1)
	ic := retrygrpc.UnaryClientInterceptor(policy.Constant(0).WithMaxAttempts(2).WithGuard(own))
	invoker, _ := failing()

	require.Error(t, ic(context.Background(), "/svc/Fail", req, nil, nil, invoker, retrygrpc.WithPolicy(policy.Constant(0).WithMaxAttempts(3))))
	require.Less(t, protocol(own).Tokens(), 10.0, "the interceptor's guard heard the failures")

	before := protocol(own).Tokens()
	require.Error(t, ic(context.Background(), "/svc/Fail", req, nil, nil, invoker, retrygrpc.WithPolicy(policy.Constant(0).WithMaxAttempts(3).WithGuard(other))))
	require.Less(t, protocol(other).Tokens(), 10.0, "the call's own guard heard them")
	require.Equal(t, before, protocol(own).Tokens(), "in place of the interceptor's")
}

// An interceptor built with an invalid policy refuses every call, before
// anything is sent, with codes.Internal and an error matching
// policy.ErrInvalid, WithoutRetry and WithPolicy calls included.
func TestInterceptorsRefuseAnInvalidPolicy(t *testing.T) {
	bad := policy.Constant(time.Second).WithMaxAttempts(-1)
	good := policy.Constant(0).WithMaxAttempts(2)
	callOpts := map[string][]grpc.CallOption{
		"plain":        nil,
		"WithoutRetry": {retrygrpc.WithoutRetry()},
		"WithPolicy":   {retrygrpc.WithPolicy(good)},
	}
	check := func(t *testing.T, err error) {
		t.Helper()
		require.Equal(t, codes.Internal, status.Code(err))
		require.ErrorIs(t, err, policy.ErrInvalid)
		require.ErrorContains(t, err, "retrygrpc: ")
	}
	for name, opts := range callOpts {
		t.Run("unary "+name, func(t *testing.T) {
			invoker, n := failing()
			check(t, retrygrpc.UnaryClientInterceptor(bad)(context.Background(), "/svc/M", req, nil, nil, invoker, opts...))
			require.Zero(t, n.Load(), "nothing is sent")
		})
		t.Run("stream "+name, func(t *testing.T) {
			var opened atomic.Int32
			streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				opened.Add(1)
				return nil, status.Error(codes.Unavailable, "down")
			}
			cs, err := retrygrpc.StreamClientInterceptor(bad)(context.Background(), &grpc.StreamDesc{ServerStreams: true}, nil, "/svc/S", streamer, opts...)
			require.Nil(t, cs)
			check(t, err)
			require.Zero(t, opened.Load(), "nothing is opened")
		})
	}

	for _, own := range []policy.Policy{bad, {}} {
		t.Run("a call's own invalid policy "+own.String(), func(t *testing.T) {
			invoker, n := failing()
			check(t, retrygrpc.UnaryClientInterceptor(good)(context.Background(), "/svc/M", req, nil, nil, invoker, retrygrpc.WithPolicy(own)))
			require.Zero(t, n.Load())
		})
	}
}
