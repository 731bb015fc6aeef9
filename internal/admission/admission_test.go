package admission_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

func TestGuarded(t *testing.T) {
	p := policy.Constant(time.Second)

	own := admission.Guarded(p).Guard()
	require.NotNil(t, own, "a policy with no guard gets one")
	require.NotSame(t, own, admission.Guarded(p).Guard(), "each call makes a fresh guard")
	require.Equal(t, float64(admission.Tokens), (*admit.Guard)(own).Tokens(), "a full guard of the default capacity")

	g := policy.NewGuard(10, 1)
	require.Same(t, g, admission.Guarded(p.WithGuard(g)).Guard(), "the policy's guard is kept")

	require.Nil(t, admission.Guarded(p.WithGuard(admission.Off)).Guard(), "Off makes no guard")
}
