package retryhttp

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
)

// overrideKey is the context key of a request's own policy.
type overrideKey struct{}

// override is what ContextWithPolicy or ContextWithoutRetry put in a context.
type override struct {
	p   policy.Policy
	off bool // ContextWithoutRetry: one attempt through the base alone
}

// ContextWithPolicy returns a copy of ctx under which a Transport retries a
// request under p instead of its own policy. The Transport keeps its base,
// its classification, its options and its guard, unless p brings a guard
// (policy.Policy.WithGuard).
//
// The override closest to the request wins: a ContextWithPolicy or
// [ContextWithoutRetry] on a context derived from the returned one
// replaces it.
//
// An invalid p is reported by RoundTrip, as an error matching
// policy.ErrInvalid, and nothing is sent.
//
// Build p once and give the same value to every request that needs it: a
// Transport keeps its work for the last 8 policies it was given this way, and
// two policies built apart are two policies.
func ContextWithPolicy(ctx context.Context, p policy.Policy) context.Context {
	return context.WithValue(ctx, overrideKey{}, &override{p: p})
}

// ContextWithoutRetry returns a copy of ctx under which a Transport sends a
// request once, through its base alone, as if there were no Transport: no
// idempotency key, no attempt timeout, no hooks, and nothing told to the
// guard. The override closest to the request wins, as for
// [ContextWithPolicy].
func ContextWithoutRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, overrideKey{}, &override{off: true})
}

// roundTripUnder sends req under o, the override its context carries.
func (t *Transport) roundTripUnder(req *http.Request, o *override) (*http.Response, error) {
	if o.off {
		base, _, _ := t.settings()
		return base.RoundTrip(req)
	}
	u := t.derived.get(o.p)
	if u == nil {
		var err error
		if u, err = t.under(o.p); err != nil {
			return nil, refuse(req, err)
		}
		t.derived.put(o.p, u)
	}
	return u.roundTrip(u.keyed(req))
}

// under returns the Transport of requests whose context carries p: p in
// place of t's policy, and the rest as t has it. Its guard is t's, unless p
// brings one.
func (t *Transport) under(p policy.Policy) (*Transport, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Guard() == nil {
		_, own, _ := t.settings()
		p = p.WithGuard(own.Guard())
		if own.Guard() == nil { // a zero Transport, or one built with admission.Off
			p = p.WithGuard(admission.Off)
		}
	}
	u := &Transport{config: t.config, base: t.base, built: true}
	u.adopt(admission.Guarded(p))
	return u, nil
}

// derivationsKept is how many policies of requests' contexts a Transport
// keeps the Transport of (see ContextWithPolicy).
const derivationsKept = 8

// derivations keeps the Transports that under made for the last few
// policies, so that a request under a policy given before allocates
// nothing for it. A new one takes the place of the one made first.
type derivations struct {
	slots [derivationsKept]atomic.Pointer[derivation]
	next  atomic.Uint32 // the slot the next one takes, modulo derivationsKept
}

// derivation is the Transport made for one policy.
type derivation struct {
	p policy.Policy // compared by identity: a Policy's settings never change
	u *Transport
}

// get returns the Transport kept for p, or nil.
func (d *derivations) get(p policy.Policy) *Transport {
	for i := range d.slots {
		if e := d.slots[i].Load(); e != nil && e.p == p {
			return e.u
		}
	}
	return nil
}

// put keeps u as the Transport for p.
func (d *derivations) put(p policy.Policy, u *Transport) {
	i := (d.next.Add(1) - 1) % derivationsKept
	d.slots[i].Store(&derivation{p: p, u: u})
}

// refuse closes req's body, as a RoundTripper does on every error, and
// returns the error of a request whose context carries an unusable policy.
func refuse(req *http.Request, err error) error {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return fmt.Errorf("retryhttp: %s %s: the policy of the request's context (ContextWithPolicy) is unusable: %w", req.Method, req.URL.Redacted(), err)
}
