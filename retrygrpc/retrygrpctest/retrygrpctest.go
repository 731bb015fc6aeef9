// Package retrygrpctest makes gRPC calls fail on purpose, for tests of code
// that retries them: interceptors, for clients and for servers, that give
// each call the fault a [retrytest.Injector] decides on.
//
// A fault's Err is the call's status, best made with status.Error (any
// other error reaches the caller as codes.Unknown), and its Hint travels
// in the grpc-retry-pushback-ms trailer (gRPC A6). Latency and Stall delay
// the call, as they do everywhere. With Partial, a stream's first After
// messages go through before the fault strikes. The faults of HTTP alone
// (Status, Reset, Truncate) fail the call with codes.Internal and a
// message that says so. So does Panic on the server side, which gRPC does
// not recover: it would end the process.
//
// On the client side, put the interceptors after retrygrpc's, so that each
// attempt meets the faults:
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(insecure.NewCredentials()),
//		grpc.WithDisableRetry(),
//		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p), retrygrpctest.UnaryClientInterceptor(in)),
//		grpc.WithChainStreamInterceptor(retrygrpc.StreamClientInterceptor(p), retrygrpctest.StreamClientInterceptor(in)),
//	)
//
// It is a package of module retrygrpc, so that package retrytest stays free
// of gRPC.
package retrygrpctest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/retrygrpc"
	"github.com/retrykit/retrykit/retrytest"
)

// errNil is what every call fails with through an interceptor of a nil
// injector.
var errNil = status.Error(codes.Internal, "retrygrpctest: nil *retrytest.Injector (retrytest.New returned an error?)")

// picked reports whether the interceptor is for method: methods empty, or
// listing it.
func picked(methods []string, method string) bool {
	return len(methods) == 0 || slices.Contains(methods, method)
}

// unsupported says why a gRPC call cannot show f, or is nil when it can.
// server is true on the server side; stream for a stream.
func unsupported(f retrytest.Fault, server, stream bool) error {
	var why string
	switch {
	case f.Status != 0 || f.Reset || f.Truncate:
		why = "a gRPC call has no HTTP status, connection reset or truncated body: give the fault an Err such as status.Error(codes.Unavailable, ...)"
	case f.Panic != nil && server:
		why = "a gRPC server does not recover panics: the fault's Panic would end the process"
	case f.Partial && !stream:
		why = "a unary call has no stream for a Partial fault to break"
	default:
		return nil
	}
	return status.Error(codes.Internal, "retrygrpctest: "+why)
}

// waited turns the error of Injector.Wait into a status.
func waited(err error) error {
	if errors.Is(err, retrytest.ErrClosed) {
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.FromContextError(err).Err()
}

// pushback is the trailer that carries f's Hint, or nil without one.
func pushback(f retrytest.Fault) metadata.MD {
	if f.Hint <= 0 {
		return nil
	}
	ms := f.Hint / time.Millisecond
	if f.Hint%time.Millisecond != 0 {
		ms++
	}
	return metadata.Pairs(retrygrpc.PushbackKey, strconv.FormatInt(int64(ms), 10))
}

// before makes the part of f that strikes before a call happen: it waits,
// then returns the call's error, or nil when the call is to go on. own
// says whether the error is the fault's Err, which carries its Hint.
func before(ctx context.Context, in *retrytest.Injector, f retrytest.Fault) (err error, own bool) {
	if err := in.Wait(ctx, f); err != nil {
		return waited(err), false
	}
	if f.Panic != nil {
		panic(f.Panic)
	}
	return f.Err, f.Err != nil
}
