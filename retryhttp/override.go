package retryhttp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/retrykit/retrykit/policy"
)

// overrideKey is the context key of a request's own policy.
type overrideKey struct{}

// override is what WithPolicy or WithoutRetry put in a context.
type override struct {
	p   policy.Policy
	off bool // WithoutRetry: one attempt through the base alone
}

// WithPolicy returns a copy of ctx under which a Transport retries a
// request under p instead of its own policy. The override closest to the
// request wins: a WithPolicy or [WithoutRetry] on a context derived from
// the returned one replaces it. Everything else of the Transport stays: its
// base, its classification, its options and its guard. A guard in p
// (policy.Policy.WithGuard) takes the place of the Transport's. As in [New],
// a p with neither an attempt limit nor a time limit stops after 5
// attempts. An invalid p is reported by RoundTrip, as an error matching
// policy.ErrInvalid, and nothing is sent. retrygrpc spells the same
// override for a gRPC call as a call option, retrygrpc.WithPolicy.
func WithPolicy(ctx context.Context, p policy.Policy) context.Context {
	return context.WithValue(ctx, overrideKey{}, &override{p: p})
}

// WithoutRetry returns a copy of ctx under which a Transport sends a
// request once, through its base alone, as if there were no Transport. The
// request gets no idempotency key and no attempt timeout, the guard
// hears nothing of it, and the Transport's hooks are not called, so
// retryotel records no call and no attempt span for it. The override closest to the request wins, as for
// [WithPolicy]. retrygrpc spells the same override for a gRPC call as a
// call option, retrygrpc.WithoutRetry.
func WithoutRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, overrideKey{}, &override{off: true})
}

// roundTripUnder sends req under o, the override its context carries.
func (t *Transport) roundTripUnder(req *http.Request, o *override) (*http.Response, error) {
	base, p, retryable := t.settings()
	if o.off {
		return base.RoundTrip(req)
	}
	if err := o.p.Validate(); err != nil {
		return nil, refuse(req, err)
	}
	// A Transport of its own for the request: the override's policy, the
	// rest as t has it, and t's guard unless the policy brings one.
	u, err := New(base, o.p, WithRetryIf(retryable), WithGuard(p.Guard()), WithRetryOptions(t.opts...))
	if err != nil {
		return nil, refuse(req, err)
	}
	u.keys = t.keys
	return u.roundTrip(u.keyed(req))
}

// refuse closes req's body, as a RoundTripper does on every error, and
// returns the error of a request whose context carries an unusable policy.
func refuse(req *http.Request, err error) error {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return fmt.Errorf("retryhttp: %s %s: the policy of the request's context (WithPolicy) is unusable: %w", req.Method, req.URL.Redacted(), err)
}
