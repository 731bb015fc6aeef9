package retrygrpctest

import (
	"context"

	"google.golang.org/grpc"

	"github.com/retrykit/retrykit/retrytest"
)

// UnaryServerInterceptor returns a server interceptor that gives each
// unary call of the given methods the fault in decides on, instead of or
// before its handler. Methods are full names, such as
// "/pkg.Service/Method", and none means every method. Latency delays the
// handler. Err is the call's status, with the fault's Hint as pushback.
// Stall holds the call until its context ends or in is closed. Calls of
// other methods do not count as calls of in's plan.
func UnaryServerInterceptor(in *retrytest.Injector, methods ...string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if in == nil {
			return nil, errNil
		}
		if !picked(methods, info.FullMethod) {
			return handler(ctx, req)
		}
		f, ok := in.Next(ctx)
		if !ok {
			return handler(ctx, req)
		}
		if err := unsupported(f, true, false); err != nil {
			return nil, err
		}
		if err, own := before(ctx, in, f); err != nil {
			if md := pushback(f); own && md != nil {
				_ = grpc.SetTrailer(ctx, md)
			}
			return nil, err
		}
		return handler(ctx, req)
	}
}

// UnaryClientInterceptor returns a client interceptor that gives each unary
// call of the given methods the fault in decides on, instead of or before
// sending it. No methods means every method. Latency delays the call. Err
// fails it without sending it. The fault's Hint becomes the pushback
// trailer that a grpc.Trailer call option receives, which is how
// retrygrpc's interceptor reads it. Stall holds the call until its context
// ends or in is closed. Panic panics.
func UnaryClientInterceptor(in *retrytest.Injector, methods ...string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if in == nil {
			return errNil
		}
		if !picked(methods, method) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		f, ok := in.Next(ctx)
		if !ok {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		if err := unsupported(f, false, false); err != nil {
			return err
		}
		if err, own := before(ctx, in, f); err != nil {
			if md := pushback(f); own && md != nil {
				for _, o := range opts {
					if t, ok := o.(grpc.TrailerCallOption); ok {
						*t.TrailerAddr = md
					}
				}
			}
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
