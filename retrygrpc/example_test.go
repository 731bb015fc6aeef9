package retrygrpc_test

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrygrpc"
)

// A client connection whose unary and stream calls retry Unavailable and
// ResourceExhausted, at most 4 attempts each, with grpc's own retry off so
// that the two do not multiply. No connection is made until the first call.
func ExampleUnaryClientInterceptor() {
	p := policy.Exponential(100 * time.Millisecond).WithCap(5 * time.Second).WithMaxAttempts(4)
	codesOpt := retrygrpc.WithCodes(codes.Unavailable, codes.ResourceExhausted)
	conn, err := grpc.NewClient("passthrough:///127.0.0.1:50051",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p, codesOpt)),
		grpc.WithChainStreamInterceptor(retrygrpc.StreamClientInterceptor(p, codesOpt)),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Println(conn.GetState())
	// Output: IDLE
}
