package retrygrpctest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
	"github.com/retrykit/retrykit/retrygrpc/retrygrpctest"
	"github.com/retrykit/retrykit/retrytest"
)

var (
	req         = &healthpb.HealthCheckRequest{}
	unavailable = status.Error(codes.Unavailable, "scripted outage")
)

// rig is one side's setup: the injector, the clock that retrygrpc's
// interceptors wait on, and a client.
type rig struct {
	in  *retrytest.Injector
	clk *retrytest.Clock
	c   healthpb.HealthClient
	svc *service
}

// bothSides runs test once with plan's faults in the server's interceptors,
// and once in the client's, beneath retrygrpc's, which retry under p on a
// fresh retrytest.Clock. A plan whose Clock is set to clockHere gets that
// same clock.
func bothSides(t *testing.T, plan retrytest.Plan, p policy.Policy, test func(t *testing.T, r rig)) {
	for _, server := range []bool{true, false} {
		name := map[bool]string{true: "server", false: "client"}[server]
		t.Run(name, func(t *testing.T) {
			r := rig{clk: retrytest.NewClock()}
			side := plan
			if side.Clock == clockHere {
				side.Clock = r.clk
			}
			r.in = mustNew(t, side)
			pp := p.WithClock(r.clk)
			unary := []grpc.UnaryClientInterceptor{retrygrpc.UnaryClientInterceptor(pp)}
			stream := []grpc.StreamClientInterceptor{retrygrpc.StreamClientInterceptor(pp)}
			var sopts []grpc.ServerOption
			if server {
				sopts = []grpc.ServerOption{
					grpc.ChainUnaryInterceptor(retrygrpctest.UnaryServerInterceptor(r.in)),
					grpc.ChainStreamInterceptor(retrygrpctest.StreamServerInterceptor(r.in)),
				}
			} else {
				unary = append(unary, retrygrpctest.UnaryClientInterceptor(r.in))
				stream = append(stream, retrygrpctest.StreamClientInterceptor(r.in))
			}
			r.c, r.svc = serve(t, false, sopts, grpc.WithChainUnaryInterceptor(unary...), grpc.WithChainStreamInterceptor(stream...))
			test(t, r)
		})
	}
}

// clockHere, as a plan's Clock, stands for the clock of the rig.
var clockHere = retrytest.NewClock()

// calls are the two kinds of call, each run to its end: a stream must
// bring all its messages.
var calls = []struct {
	name string
	run  func(context.Context, healthpb.HealthClient) error
}{
	{"unary", func(ctx context.Context, c healthpb.HealthClient) error { _, err := c.Check(ctx, req); return err }},
	{"stream", func(ctx context.Context, c healthpb.HealthClient) error {
		n, err := watchAll(ctx, c)
		if err == nil && n != watched {
			return status.Errorf(codes.DataLoss, "%d messages of %d", n, watched)
		}
		return err
	}},
}

// async runs call in a goroutine: the test moves the clock meanwhile.
func async(ctx context.Context, c healthpb.HealthClient, call func(context.Context, healthpb.HealthClient) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- call(ctx, c) }()
	return done
}

func TestUnavailableWithPushbackIsRiddenOut(t *testing.T) {
	plan := retrytest.Plan{
		Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: unavailable, Hint: 1499500 * time.Microsecond}, Times: 2}, {}},
	}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			bothSides(t, plan, policy.Constant(time.Hour), func(t *testing.T, r rig) {
				done := async(t.Context(), r.c, call.run)
				require.Equal(t, 1500*time.Millisecond, r.clk.Step(t), "the pushback, rounded up to the millisecond")
				require.Equal(t, 1500*time.Millisecond, r.clk.Step(t))
				require.NoError(t, <-done)
				require.Equal(t, int32(1), r.svc.calls.Load(), "only the third attempt reached the service")
				require.Equal(t, retrytest.Counts{Calls: 3, Injected: 2, Errors: 2, Hints: 2}, r.in.Counts())
			})
		})
	}
}

func TestStreamBrokenAfterMessages(t *testing.T) {
	plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, After: 2, Err: unavailable}}}}
	bothSides(t, plan, policy.Constant(0).WithMaxAttempts(3), func(t *testing.T, r rig) {
		n, err := watchAll(t.Context(), r.c)
		require.Equal(t, 2, n)
		require.Equal(t, codes.Unavailable, status.Code(err))
		require.Equal(t, "scripted outage", status.Convert(err).Message())
		require.Equal(t, int32(1), r.svc.calls.Load(), "a stream that brought messages is not retried")
	})
}

func TestStreamBrokenAtItsEnd(t *testing.T) {
	plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, After: 10, Err: unavailable}}}}
	bothSides(t, plan, policy.Constant(0).WithMaxAttempts(3), func(t *testing.T, r rig) {
		n, err := watchAll(t.Context(), r.c)
		require.Equal(t, watched, n)
		require.Equal(t, codes.Unavailable, status.Code(err), "the stream ended with the fault's status, not OK")
	})
}

func TestStreamPausedAfterAMessage(t *testing.T) {
	plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Partial: true, After: 1, Latency: 5 * time.Second}}}, Clock: clockHere}
	bothSides(t, plan, policy.Constant(0), func(t *testing.T, r rig) {
		done := async(t.Context(), r.c, calls[1].run)
		require.Equal(t, 5*time.Second, r.clk.Step(t))
		require.NoError(t, <-done)
		require.Equal(t, 1, r.in.Counts().Partials)
	})
}

func TestLatencyOnThePlansClock(t *testing.T) {
	plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Latency: 3 * time.Second}}}, Clock: clockHere}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			bothSides(t, plan, policy.Constant(0), func(t *testing.T, r rig) {
				done := async(t.Context(), r.c, call.run)
				require.Equal(t, 3*time.Second, r.clk.Step(t))
				require.NoError(t, <-done)
				require.Equal(t, int32(1), r.svc.calls.Load())
			})
		})
	}
}

func TestStallEnds(t *testing.T) {
	for _, end := range []struct {
		name string
		code codes.Code
		msg  string
	}{{"with the call's context", codes.Canceled, "context canceled"}, {"with the injector", codes.Unavailable, "retrytest: injector closed"}} {
		for _, call := range calls {
			t.Run(end.name+"/"+call.name, func(t *testing.T) {
				stalled := make(chan struct{}, 1)
				plan := retrytest.Plan{
					Steps:    []retrytest.Step{{Fault: retrytest.Fault{Stall: true}}},
					OnInject: func(context.Context, retrytest.Injection) { stalled <- struct{}{} },
				}
				bothSides(t, plan, policy.Constant(0).WithMaxAttempts(1), func(t *testing.T, r rig) {
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					done := async(ctx, r.c, call.run)
					<-stalled
					if end.code == codes.Canceled {
						cancel()
					} else {
						r.in.Close()
					}
					err := <-done
					require.Equal(t, end.code, status.Code(err), "%v", err)
					require.Contains(t, status.Convert(err).Message(), end.msg)
					require.Zero(t, r.svc.calls.Load())
				})
			})
		}
	}
}

func TestFaultsGRPCCannotShow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  retrytest.Fault
		call   int  // of calls
		server bool // only the server side refuses it
		msg    string
	}{
		{"a status", retrytest.Fault{Status: 503}, 0, false, "a gRPC call has no HTTP status"},
		{"a reset", retrytest.Fault{Reset: true}, 1, false, "connection reset"},
		{"a truncation", retrytest.Fault{Partial: true, Truncate: true}, 1, false, "truncated body"},
		{"a partial unary call", retrytest.Fault{Partial: true, Err: unavailable}, 0, false, "a unary call has no stream for a Partial fault to break"},
		{"a server's panic", retrytest.Fault{Panic: "boom"}, 0, true, "a gRPC server does not recover panics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := retrytest.Plan{Steps: []retrytest.Step{{Fault: tc.fault}}}
			bothSides(t, plan, policy.Constant(0).WithMaxAttempts(1), func(t *testing.T, r rig) {
				if tc.server && t.Name() != "TestFaultsGRPCCannotShow/"+tc.name+"/server" {
					return
				}
				err := calls[tc.call].run(t.Context(), r.c)
				require.Equal(t, codes.Internal, status.Code(err), "%v", err)
				require.Contains(t, status.Convert(err).Message(), "retrygrpctest: ")
				require.Contains(t, status.Convert(err).Message(), tc.msg)
				require.Zero(t, r.svc.calls.Load())
			})
		})
	}
}

func TestClientPanics(t *testing.T) {
	in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Panic: "boom"}}}})
	c, _ := serve(t, false, nil, grpc.WithUnaryInterceptor(retrygrpctest.UnaryClientInterceptor(in)))
	require.PanicsWithValue(t, "boom", func() { _, _ = c.Check(t.Context(), req) })
}

func TestMethods(t *testing.T) {
	in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: unavailable}}}})
	watch := healthpb.Health_Watch_FullMethodName
	c, svc := serve(t, false, []grpc.ServerOption{
		grpc.UnaryInterceptor(retrygrpctest.UnaryServerInterceptor(in, watch)),
		grpc.StreamInterceptor(retrygrpctest.StreamServerInterceptor(in, watch)),
	})
	_, err := c.Check(t.Context(), req)
	require.NoError(t, err, "Check is not among the methods")
	_, err = watchAll(t.Context(), c)
	require.Equal(t, codes.Unavailable, status.Code(err))
	require.Equal(t, int32(1), svc.calls.Load())
	require.Equal(t, 1, in.Counts().Calls, "calls of other methods are not calls of the plan")
}

func TestNilInjector(t *testing.T) {
	var in *retrytest.Injector
	c, _ := serve(t, false, []grpc.ServerOption{grpc.UnaryInterceptor(retrygrpctest.UnaryServerInterceptor(in))})
	_, err := c.Check(t.Context(), req)
	require.Equal(t, codes.Internal, status.Code(err))
	require.Contains(t, err.Error(), "retrygrpctest: nil *retrytest.Injector")
	for _, err := range []error{
		retrygrpctest.UnaryClientInterceptor(in)(t.Context(), "/m", nil, nil, nil, nil),
		func() error {
			_, err := retrygrpctest.StreamClientInterceptor(in)(t.Context(), nil, nil, "/m", nil)
			return err
		}(),
		retrygrpctest.StreamServerInterceptor(in)(nil, nil, nil, nil),
	} {
		require.Equal(t, codes.Internal, status.Code(err))
	}
}

// A gRPC client that must ride out UNAVAILABLE, inside a testing/synctest
// bubble: real gRPC over an in-memory connection, on the real clock, whose
// time is virtual there.
func TestUnavailableRiddenOutInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, retrytest.Plan{
			Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: unavailable, Hint: time.Second}, Times: 2}, {}},
		})
		p := policy.Exponential(100 * time.Millisecond).WithMaxAttempts(4)
		c, svc := serve(t, true, []grpc.ServerOption{grpc.UnaryInterceptor(retrygrpctest.UnaryServerInterceptor(in))},
			grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
		start := time.Now()
		_, err := c.Check(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, 2*time.Second, time.Since(start), "two pushbacks of 1s")
		require.Equal(t, int32(1), svc.calls.Load())
	})
}
