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
// calls under p. A failed attempt is retried when its code is in the set
// that [WithCodes] gives, codes.Unavailable by default, the policy's own
// predicate, if any, accepts its error, and the call's context is not done. The next attempt waits the policy's delay, or the
// server's pushback. The interceptor is safe for concurrent use.
//
// Dial with grpc.WithDisableRetry. gRPC's own retry runs beneath the
// interceptor, once per attempt, so the attempts would multiply.
//
// A status that was not retried comes back as the server sent it. When the
// retries end, the error's code is the last status's code, or
// codes.DeadlineExceeded or codes.Canceled when the call's context ended the
// call. errors.As finds the *retry.Error, with the attempts made and the last
// status. docs/calls.md lists how a call ends.
//
// A per-attempt timeout (policy.Policy.WithAttemptTimeout) gives each attempt
// a deadline of its own, which gRPC sends to the server. The deadline follows
// the policy's clock, so test such a policy on the real clock, or inside
// testing/synctest.
//
// An interceptor built with an invalid policy refuses every call, before
// anything is sent, with codes.Internal and an error matching
// policy.ErrInvalid. Check a policy read from configuration with
// policy.Policy.Validate first.
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
		if err := cp.Validate(); err != nil { // a WithPolicy of its own
			return invalid(err)
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
