package retrygrpctest_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
	"github.com/retrykit/retrykit/retrygrpc/retrygrpctest"
	"github.com/retrykit/retrykit/retrytest"
)

// instant is a clock whose waits end at once, moving its time on by them:
// an example cannot run in a testing/synctest bubble, which needs a
// *testing.T. TestUnavailableRiddenOutInABubble runs the same in one.
type instant struct {
	mu  sync.Mutex
	now time.Time
}

func (c *instant) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *instant) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// A gRPC client that must ride out UNAVAILABLE: the server refuses the
// first two calls, asking for a pause of 250ms, and the client,
// retrygrpc's interceptor, waits as asked and tries again.
func ExampleUnaryServerInterceptor() {
	in, err := retrytest.New(retrytest.Plan{
		Steps: []retrytest.Step{{
			Fault: retrytest.Fault{Err: status.Error(codes.Unavailable, "warming up"), Hint: 250 * time.Millisecond},
			Times: 2,
		}, {}},
		OnInject: func(_ context.Context, i retrytest.Injection) {
			fmt.Printf("call %d: %v\n", i.Call, i.Fault.Err)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	srv := grpc.NewServer(grpc.UnaryInterceptor(retrygrpctest.UnaryServerInterceptor(in)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	// The client under test.
	clk := &instant{now: time.Unix(0, 0)}
	p := policy.Exponential(100 * time.Millisecond).WithMaxAttempts(4).WithClock(clk)
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(resp.GetStatus(), err, "after", clk.Now().Sub(time.Unix(0, 0)))
	// Output:
	// call 1: rpc error: code = Unavailable desc = warming up
	// call 2: rpc error: code = Unavailable desc = warming up
	// SERVING <nil> after 500ms
}
