package retrygrpc

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// UnaryClientInterceptor returns an interceptor that retries failed unary
// calls under p. An attempt is made again when its code is retried (see
// [WithCodes]) and the policy's own predicate, if any, accepts its error.
// The next attempt waits the policy's delay, or the server's pushback. The
// call ends when an attempt succeeds, or when the policy, the pushback or
// the call's context says stop. Retries carry the
// grpc-previous-rpc-attempts header.
// With [WithIdempotencyKeys], every attempt of a call carries the same
// idempotency key.
//
// The error returned is one of these. A status that was not retried comes
// back as the server sent it. When the call's context ended the call, the
// status.Code is codes.DeadlineExceeded or codes.Canceled. The call ends at
// once rather than start a wait that would end past its deadline. In every
// other case, the code is the last status's code. errors.As finds the
// *retry.Error, with the attempts made and the last status. A pushback
// that says stop, such as a server behind [UnaryServerInterceptor] sends,
// makes it match retry.ErrPushback, and the guard counts it as overload. A
// call that ended while waiting for its turn at the guard fails before its
// first attempt. docs/calls.md, under "How a call ends", lists the errors
// of each end.
//
// gRPC's own retry, a retryPolicy in the service config, runs beneath the
// interceptor, once per attempt. The attempts then multiply, so dial with
// grpc.WithDisableRetry. The call's options are given to every attempt, so
// an option such as grpc.OnFinish runs once per attempt.
//
// A per-attempt timeout (policy.Policy.WithAttemptTimeout) gives each
// attempt a deadline of its own, which gRPC sends to the server. An attempt
// that runs out of it is retried, whether the client or the server noticed
// first. The deadline follows the policy's clock. So a policy with a mock
// clock and an attempt timeout sends the server the mock's time. Test such
// policies on the real clock, or inside testing/synctest.
//
// An attempt timeout and the call's deadline are told apart by the error.
// When the call's deadline ran out, the error matches
// context.DeadlineExceeded and not retry.ErrAttemptTimeout. When an
// attempt's timeout ran out, it matches retry.ErrAttemptTimeout, and
// context.DeadlineExceeded too, as an attempt timeout does in package
// retry. gRPC's transport reports a deadline as soon as the real clock has
// passed it, which can be a moment before the context's own timer fires. So
// a DeadlineExceeded that comes past a deadline waits for that timer, for a
// second at most, to learn which deadline ran out.
//
// An interceptor built with an invalid policy refuses every call before
// anything is sent, calls with [WithoutRetry] or a [WithPolicy] of their
// own included. The error has codes.Internal and matches policy.ErrInvalid,
// as the error of retry.Do does for an invalid policy. The interceptor's
// signature leaves no room for an error where it is built, and bad
// configuration gets an error, never a panic. So build the interceptors
// from a policy checked with policy.Policy.Validate, where the error can
// still stop the program from starting.
//
// The interceptor is safe for concurrent use by any number of calls.
func UnaryClientInterceptor(p policy.Policy, opts ...Option) grpc.UnaryClientInterceptor {
	c := newConfig(opts)
	p, refusal := adopt(p)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		if refusal != nil {
			return refusal
		}
		cp, on := policyFor(p, callOpts)
		if !on {
			return invoker(ctx, method, req, reply, cc, callOpts...)
		}
		ctx = c.keyed(ctx)
		u := unaryPool.Get().(*unaryCall)
		u.cfg, u.p, u.caller, u.method, u.req, u.reply, u.cc, u.invoker = c, cp, ctx, method, req, reply, cc, invoker
		// The trailer option reads the pushback of a failed attempt.
		u.opts = append(append(u.buf[:0], callOpts...), grpc.Trailer(&u.trailer))
		err := retry.Do(ctx, u.attempt, cp, c.retryOpts...)
		u.release()
		return toStatus(err)
	}
}

// unaryCall is one unary call's state, pooled so that a call that succeeds
// at once allocates nothing of its own.
type unaryCall struct {
	cfg     *config
	p       policy.Policy
	caller  context.Context
	method  string
	req     any
	reply   any
	cc      *grpc.ClientConn
	invoker grpc.UnaryInvoker
	opts    []grpc.CallOption
	buf     [8]grpc.CallOption
	trailer metadata.MD
	n       int
}

var unaryPool = sync.Pool{New: func() any { return new(unaryCall) }}

func (u *unaryCall) attempt(ctx context.Context) error {
	u.n++
	u.trailer = nil
	err := u.invoker(withPrevious(ctx, u.n), u.method, u.req, u.reply, u.cc, u.opts...)
	if err == nil {
		return nil
	}
	return u.cfg.classify(u.p, u.caller, ctx, err, u.trailer)
}

func (u *unaryCall) release() {
	clear(u.opts)
	*u = unaryCall{}
	unaryPool.Put(u)
}
