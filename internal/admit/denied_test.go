package admit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
)

// Each success lets the denied retry that has waited longest go, one for
// one; failures let none go.
func TestGuardSuccessLetsADeniedRetryGo(t *testing.T) {
	g := admit.New(50, 1)
	a, b, c := g.Denied(), g.Denied(), g.Denied()
	g.Record(true, admit.Failed)
	g.Record(false, admit.Overloaded)
	require.Nil(t, admit.Turned(a), "a failure lets no denied retry go")
	g.Record(true, admit.Succeeded)
	require.NotNil(t, admit.Turned(a), "the first denied")
	require.Nil(t, admit.Turned(b), "one for one")
	g.Withdraw(b) // its back-off ended first
	g.Record(false, admit.Slow)
	require.NotNil(t, admit.Turned(c), "b no longer waits: c's turn")
	g.Withdraw(a) // a turn that came already is left as it is
	g.Withdraw(c)
	g.Record(true, admit.Succeeded) // nothing waits
	require.Equal(t, int64(0), admit.Running(g))
}
