// Package admission is the one home of the admission default that
// retryhttp, retrygrpc and retrykube share: a policy that carries no guard
// gets a guard of its own, policy.NewGuard(50, 1), for each Transport,
// interceptor or rate limiter built from it. A guard in the policy is how
// several of them share one.
//
// [Off] exists for this repository's tests and benchmarks, which measure
// plain retries beside the guard. Users have no way to reach it: see
// docs/admission.md for why the integrations offer no switch to turn
// admission off.
package admission

import "github.com/retrykit/retrykit/policy"

// Tokens and Ratio make the guard that an integration gives itself when
// its policy carries none.
const (
	Tokens = 50
	Ratio  = 1
)

// Off is the guard that, in a policy, makes an integration run with no
// guard at all. It is never asked: Guarded takes it out of the policy.
var Off = policy.NewGuard(Tokens, Ratio)

// Guarded returns p with the guard an integration runs it under: p's own;
// none when p's guard is Off; a fresh guard of Tokens and Ratio when p
// carries none.
func Guarded(p policy.Policy) policy.Policy {
	switch g := p.Guard(); {
	case g == Off:
		return p.WithGuard(nil)
	case g == nil:
		return p.WithGuard(policy.NewGuard(Tokens, Ratio))
	}
	return p
}
