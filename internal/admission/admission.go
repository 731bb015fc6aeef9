// Package admission carries out the admission default that retryhttp,
// retrygrpc and retrykube share, as docs/admission.md ("Guards across the
// packages") states it: [Guarded] gives a policy that carries no guard one
// of its own.
//
// [Off] exists for this repository's tests and benchmarks, which measure
// plain retries beside the guard. Users have no way to reach it.
package admission

import (
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

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

// Of returns the guard of p with its protocol, or nil when p has none.
// policy.Guard is a defined type over admit.Guard, so this is a conversion.
func Of(p policy.Policy) *admit.Guard { return (*admit.Guard)(p.Guard()) }
