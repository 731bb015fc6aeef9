//go:build go1.25

package policy_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

// The rules of the guard itself are tested in internal/admit; these tests
// check what a policy makes of a guard.

func TestGuardValidation(t *testing.T) {
	for _, tt := range []struct {
		tokens, ratio float64
		ok            bool
	}{
		{10, 0.4, true},
		{1, 0.000001, true},
		{1_000_000, 1_000_000, true},
		{0, 0.1, false},
		{1_000_000 + 1, 1, false},
		{math.NaN(), 0.1, false},
		{10, 1e-7, false},
		{10, 11, false},
		{10, math.NaN(), false},
	} {
		err := policy.Default().WithGuard(policy.NewGuard(tt.tokens, tt.ratio)).Validate()
		if tt.ok {
			require.NoError(t, err, "NewGuard(%v, %v)", tt.tokens, tt.ratio)
			continue
		}
		require.ErrorIs(t, err, policy.ErrInvalid, "NewGuard(%v, %v)", tt.tokens, tt.ratio)
		require.ErrorContains(t, err, "policy: invalid guard: ")
	}
}

func TestPolicyWithGuard(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	p := policy.Exponential(time.Second)
	q := p.WithGuard(g)
	require.Nil(t, p.Guard(), "the receiver is unchanged")
	require.Same(t, g, q.Guard())
	require.Equal(t, p.String(), q.String(), "a guard is wiring, not text")
	require.Nil(t, q.WithGuard(nil).Guard())
}
