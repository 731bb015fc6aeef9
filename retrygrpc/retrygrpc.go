// Package retrygrpc retries gRPC client calls under retrykit policies. Give
// a connection [UnaryClientInterceptor] and [StreamClientInterceptor], with
// one policy and one guard:
//
//	p := policy.Exponential(100 * time.Millisecond).WithMaxAttempts(4).WithGuard(policy.NewGuard(50, 1))
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithDisableRetry(), // one retry layer, not two
//		grpc.WithChainUnaryInterceptor(retrygrpc.UnaryClientInterceptor(p)),
//		grpc.WithChainStreamInterceptor(retrygrpc.StreamClientInterceptor(p)),
//	)
//
// Only codes.Unavailable is retried by default, whatever the method.
// [WithCodes] replaces that set.
//
// A server's grpc-retry-pushback-ms trailer is honoured: the next attempt
// waits as long as it asks, up to the policy's hint ceiling
// (policy.Policy.WithMaxHint), and a negative value stops the retries (see
// [PushbackKey]).
//
// A stream is retried only until a response message or header has reached
// the client, and while the messages it sent fit in [MaxReplay]. After that
// its error is returned as it is.
//
// The call's deadline governs every attempt: no wait starts that would end
// past it.
//
// Each interceptor has a guard that holds back retries that are not paying
// off: the guard in p, or else one of its own. Give a connection's two
// interceptors one guard through the policy, as above. docs/admission.md
// says how the guard decides.
//
// Per call, [WithPolicy] and [WithoutRetry] override the interceptor's
// policy.
//
// [UnaryServerInterceptor] and [StreamServerInterceptor] are the server side:
// they tell a caller when a retry would fail again.
//
// retrygrpc is a module of its own, so that users of retrykit's core never
// download gRPC. docs/grpc.md has the details.
package retrygrpc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

const (
	// PushbackKey is the trailer in which a server asks the client to wait
	// before retrying, in milliseconds (gRPC A6). A negative or unparseable
	// value, or more than one value, asks it not to retry at all: the call
	// then ends with an error matching retry.ErrPushback, and the guard
	// counts the attempt as overload.
	PushbackKey = "grpc-retry-pushback-ms"
	// PreviousAttemptsKey is the request header that tells the server how
	// many attempts of this call came before (gRPC A6). The client
	// interceptors send 1, 2, … on the retries, as the header's only value.
	PreviousAttemptsKey = "grpc-previous-rpc-attempts"
)

// An Option configures an interceptor when it is built. A nil Option is
// ignored. Its shape is that of retry.Option.
type Option func(config) config

// WithCodes returns an Option that replaces the set of status codes
// retried, codes.Unavailable alone, with cs. Unavailable is the default
// because it means the server did not process the request. With no codes,
// nothing is retried. The policy's own predicate (policy.Policy.WithRetryIf)
// can only refuse more.
func WithCodes(cs ...codes.Code) Option {
	cs = append([]codes.Code(nil), cs...)
	return func(c config) config {
		c.codes = cs
		return c
	}
}

// WithRetryOptions returns an Option that passes opts to every retry.Do the
// interceptor runs, for example retry.WithHooks to log each attempt. The
// options of several WithRetryOptions add up.
func WithRetryOptions(opts ...retry.Option) Option {
	opts = append([]retry.Option(nil), opts...)
	return func(c config) config {
		c.retryOpts = append(c.retryOpts[:len(c.retryOpts):len(c.retryOpts)], opts...)
		return c
	}
}

// config is an interceptor's settings, fixed when it is built.
type config struct {
	codes     []codes.Code
	retryOpts []retry.Option
	keys      bool // WithIdempotencyKeys was given
}

func newConfig(opts []Option) *config {
	c := config{codes: []codes.Code{codes.Unavailable}}
	for _, o := range opts {
		if o != nil {
			c = o(c)
		}
	}
	return &c
}

// adopt returns the policy an interceptor runs its calls under: p with the
// guard they share (see the package doc). For an invalid p it returns the
// error that every call through the interceptor gets instead.
func adopt(p policy.Policy) (policy.Policy, error) {
	if err := p.Validate(); err != nil {
		return p, invalid(err)
	}
	return admission.Guarded(p), nil
}

// invalid returns the status error of a call refused for err, an invalid
// policy's: codes.Internal, matching policy.ErrInvalid and err.
func invalid(err error) error {
	if !errors.Is(err, policy.ErrInvalid) {
		err = fmt.Errorf("%w: %w", policy.ErrInvalid, err)
	}
	return toStatus(fmt.Errorf("retrygrpc: %w", err))
}

func (c *config) retryable(code codes.Code) bool {
	for _, r := range c.codes {
		if r == code {
			return true
		}
	}
	return false
}

// classify turns a failed attempt's error into what retry.Do needs to hear:
// the error itself (retry, or stop if the caller's context is done),
// retry.Permanent (stop with this status), or retry.After (the server's
// pushback). attempt is the attempt's context, caller the call's: a
// DeadlineExceeded past either's deadline is told apart by awaitExpired. The
// policy's own predicate is asked here, so that an error it refuses is
// returned as the server sent it, never wrapped in a hint.
func (c *config) classify(p policy.Policy, caller, attempt context.Context, err error, trailer metadata.MD) error {
	if status.Code(err) == codes.DeadlineExceeded {
		// grpc's transport reports a deadline as soon as the clock has
		// passed it, which can be a moment before the context's own timer
		// closes Done. Wait for that moment, so that retry.Do and the
		// per-attempt timeout see the deadline that ended the attempt.
		if !awaitExpired(caller) {
			awaitExpired(attempt)
		}
	}
	if ctxErr := caller.Err(); ctxErr != nil {
		if code := status.Code(err); code == codes.Canceled || code == codes.DeadlineExceeded {
			return &cutOffError{st: err, ctx: ctxErr} // the context's end, as gRPC reports it
		}
		return err // retry.Do stops with the context's error and this one
	}
	if attempt.Err() != nil {
		// The policy's per-attempt timeout: retry.Do retries it.
		return &attemptDeadlineError{err: err}
	}
	if ownTimeout(caller, attempt) && status.Code(err) == codes.DeadlineExceeded {
		// The server, or the transport, saw the attempt's own deadline a
		// moment before the attempt's context did: the same timeout.
		return &attemptDeadlineError{err: err}
	}
	if !c.retryable(status.Code(err)) || !p.Retryable(err) {
		return retry.Permanent(err)
	}
	v := trailer[PushbackKey]
	if len(v) == 0 {
		return err
	}
	// A6: a negative, unparseable or repeated pushback means "do not retry".
	if len(v) > 1 {
		return &pushbackError{err: err}
	}
	ms, perr := strconv.ParseInt(v[0], 10, 64)
	if perr != nil || ms < 0 {
		return &pushbackError{err: err}
	}
	d := time.Duration(math.MaxInt64)
	if ms < int64(math.MaxInt64/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	return retry.After(d, err)
}

// expiryGrace bounds how long awaitExpired waits for a context past its
// deadline to be done. Its timer is due, so it is done in microseconds; the
// bound only keeps a context that never closes Done (a mock clock's, whose
// time stands still) from holding the call.
const expiryGrace = time.Second

// awaitExpired waits for ctx to be done when the real clock, which grpc
// compares deadlines with, has passed ctx's deadline, for at most
// expiryGrace. It reports whether ctx's deadline has passed.
func awaitExpired(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	if !ok || time.Now().Before(dl) {
		return false
	}
	select {
	case <-ctx.Done():
		return true
	default:
	}
	t := time.NewTimer(expiryGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return true
}

// ownTimeout reports whether attempt has a deadline of its own, before the
// caller's: the policy's per-attempt timeout.
func ownTimeout(caller, attempt context.Context) bool {
	dl, ok := attempt.Deadline()
	if !ok {
		return false
	}
	cdl, cok := caller.Deadline()
	return !cok || dl.Before(cdl)
}

// callOption is a per-call override, found among a call's grpc.CallOptions.
type callOption struct {
	grpc.EmptyCallOption
	p   policy.Policy
	off bool
}

// WithPolicy returns a call option that retries this call under p instead of
// the interceptor's policy. When a call has several WithPolicy and
// WithoutRetry options, the last one wins. The call keeps the interceptor's
// guard, unless p brings one. An invalid p fails the call before anything
// is sent, with codes.Internal and an error matching policy.ErrInvalid.
func WithPolicy(p policy.Policy) grpc.CallOption { return &callOption{p: p} }

// WithoutRetry returns a call option that makes exactly one attempt, as if
// there were no interceptor.
func WithoutRetry() grpc.CallOption { return &callOption{off: true} }

// policyFor returns the policy for a call with opts, and false when the call
// is not to be retried. The last override wins. An override keeps p's
// guard unless it brings its own.
func policyFor(p policy.Policy, opts []grpc.CallOption) (policy.Policy, bool) {
	cp, on := p, true
	for _, o := range opts {
		if co, ok := o.(*callOption); ok {
			if co.off {
				on = false
			} else {
				cp, on = co.p, true
			}
		}
	}
	if on && cp != p && cp.Guard() == nil && p.Guard() != nil {
		cp = cp.WithGuard(p.Guard())
	}
	return cp, on
}
