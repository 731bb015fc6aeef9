package retrygrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/internal/served"
)

// UnaryServerInterceptor returns a server interceptor that asks callers not
// to retry a failed call when their retry would meet the same failure: it
// sets the trailer grpc-retry-pushback-ms: -1 of gRPC A6, which this
// package's client interceptors and grpc-go's own retry honour. The handler
// must make its retrykit calls on the call's context.
//
// The trailer is set when the last retrykit call that failed on the call's
// context ended in one of these ways:
//
//   - Its guard shed it, or denied its retries.
//   - It left its guard with less than one token.
//   - Every attempt of it counted as overload, and so did the last 16 attempts
//     in a row its guard saw.
//   - Its dependency asked it not to retry.
//
// A handler that succeeds, with a fallback or otherwise, sends no signal.
// docs/layers.md has the exact rule, under "The rule".
//
// The interceptor also reads the call's grpc-previous-rpc-attempts header.
// While the call is a retry, the retrykit calls the handler makes on its
// context do not retry their dependency's answers, so the attempts of a chain
// of servers add up rather than multiply.
func UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, s := served.Serve(ctx, previous(ctx), neterr.Connection)
		resp, err := handler(ctx, req)
		if err != nil && s.Pushback() {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(PushbackKey, "-1"))
		}
		return resp, err
	}
}

// StreamServerInterceptor returns a server interceptor that asks callers
// not to retry a failed stream, by the rule of [UnaryServerInterceptor].
// The stream handler's retrykit calls must use the stream's context.
func StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, s := served.Serve(ss.Context(), previous(ss.Context()), neterr.Connection)
		err := handler(srv, &servedStream{ServerStream: ss, ctx: ctx})
		if err != nil && s.Pushback() {
			ss.SetTrailer(metadata.Pairs(PushbackKey, "-1"))
		}
		return err
	}
}

// servedStream is a server stream whose context records the handler's
// calls.
type servedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *servedStream) Context() context.Context { return s.ctx }
