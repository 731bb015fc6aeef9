package retrygrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/internal/served"
)

// UnaryServerInterceptor returns a server interceptor that asks callers not
// to retry a failed call when their retry would meet the same failure. It
// looks at the last retrykit call that failed on the call's context. The
// failed call's trailer carries the pushback when that call ended in one of
// these ways:
//
//   - Its guard shed it, or denied its retries.
//   - It left its guard with less than one token.
//   - Every attempt of it counted as overload, and so did the last 16 attempts
//     in a row its guard saw.
//   - Its dependency asked it not to retry.
//
// The exact rule, with the calls that send nothing, is in docs/layers.md,
// under "The rule", and holds for retryhttp.Handler too. The pushback is
// the trailer grpc-retry-pushback-ms: -1 of gRPC A6. This package's client
// interceptors honour it, and so does grpc-go's own retry policy. Nothing
// else is added: no detail of the failure leaves the server.
//
// The interceptor also reads the call's grpc-previous-rpc-attempts header.
// While it is 1 or more, the retrykit calls the handler makes on the call's
// context make one attempt each, since the caller retries already. So the
// attempts of a chain of servers add up rather than multiply. An attempt
// that never reached the dependency, such as a refused connection, is
// still retried as the policy says. Whatever the header, such a call
// retries an answer of its dependency only while its guard has a whole
// token left. A garbled or
// negative value counts as 0. A value past the largest int counts as the
// largest int, and so does the count sent on downstream. When the header
// is repeated, its largest value counts.
//
// A handler that succeeds, with a fallback or otherwise, sends no signal.
// So does one whose calls do not go through retrykit with the call's
// context.
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
