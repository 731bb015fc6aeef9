package retrykube_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry/retrykube"
)

// With a guard, a requeue goes ahead at its own delay while the guard admits
// it; once the guard's tokens are spent, a denied requeue waits the hold,
// between 30 s and a minute, or its own delay when that is longer, and the
// guard's probe (one a second) goes ahead. An admitted requeue that ends in
// a success gives its token back.
func TestGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 0.5)
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Second).WithGuard(g))
		require.Equal(t, time.Second, l.When("a"), "admitted: a token")
		require.Equal(t, time.Second, l.When("b"), "admitted: the last token")
		require.Zero(t, g.Tokens())
		require.Equal(t, time.Second, l.When("c"), "the probe of this second")
		for range 20 {
			d := l.When("d")
			require.GreaterOrEqual(t, d, 30*time.Second, "denied")
			require.LessOrEqual(t, d, time.Minute, "denied")
		}
		time.Sleep(time.Second)
		require.Equal(t, time.Second, l.When("e"), "the next second's probe")

		l.Forget("a") // an admitted retry that succeeded: its token back, and the ratio
		require.Equal(t, 1.5, g.Tokens())
		l.Forget("d") // denied, then succeeded: the ratio only
		require.Equal(t, 2.0, g.Tokens())
		l.Forget("new") // a first try that succeeded: the ratio, up to the capacity
		require.Equal(t, 2.0, g.Tokens())

		long := retrykube.NewRateLimiter[string](policy.Constant(2 * time.Minute).WithGuard(policy.NewGuard(1, 0.5)))
		long.When("a")
		long.When("b") // the probe
		require.Equal(t, 2*time.Minute, long.When("c"), "denied: never sooner than its own delay")
	})
}
