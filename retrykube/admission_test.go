package retrykube_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

// With a guard, each failed reconcile takes one of its tokens, and a
// requeue goes ahead at its own delay while a token is left; once they are
// spent, a denied requeue waits the hold, between 30 s and a minute, or its
// own delay when that is longer, and the guard's probe (one a second) goes
// ahead. Each success (a Forget) adds the guard's ratio.
func TestGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 0.5)
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Second).WithGuard(g))
		require.Equal(t, time.Second, l.When("a"), "admitted: a token left after its failure")
		require.Zero(t, l.When("b")-time.Second, "no token left: the probe of this second")
		require.Zero(t, g.Tokens())
		for range 20 {
			d := l.When("d")
			require.GreaterOrEqual(t, d, 30*time.Second, "denied")
			require.LessOrEqual(t, d, time.Minute, "denied")
		}
		time.Sleep(time.Second)
		require.Equal(t, time.Second, l.When("e"), "the next second's probe")

		l.Forget("a") // a success: the ratio
		require.Equal(t, 0.5, g.Tokens())
		l.Forget("d")
		l.Forget("new")
		require.Equal(t, 1.5, g.Tokens())
		l.Forget("e")
		l.Forget("f")
		require.Equal(t, 2.0, g.Tokens(), "up to the capacity")

		long := retrykube.NewRateLimiter[string](policy.Constant(2 * time.Minute).WithGuard(policy.NewGuard(1, 0.5)))
		long.When("a") // the probe
		require.Equal(t, 2*time.Minute, long.When("b"), "denied: never sooner than its own delay")
	})
}
