package retrykube_test

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

// With a guard, each failed reconcile takes one of its tokens, and a
// requeue goes ahead at its own delay while a token is left; once they are
// spent, a denied requeue waits a hold, or its own delay when that is
// longer, and the guard's probe (one a second) goes ahead. Each success (a
// Forget) adds the guard's ratio.
func TestGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 0.5)
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Second).WithGuard(g))
		require.Equal(t, time.Second, l.When("a"), "admitted: a token left after its failure")
		require.Zero(t, l.When("b")-time.Second, "no token left: the probe of this second")
		require.Zero(t, g.Tokens())
		for range 20 {
			d := l.When("d")
			require.GreaterOrEqual(t, d, 2500*time.Millisecond, "denied")
			require.LessOrEqual(t, d, 5*time.Second, "denied")
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

// A denied requeue waits 2.5 to 5 s while at most 100 objects are failing,
// and 30 s to a minute once more are.
func TestGuardHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Millisecond), retrykube.WithGuard(policy.NewGuard(1, 1)))
		require.Equal(t, time.Millisecond, l.When("object-0"), "the probe")
		for i := 1; i < 100; i++ {
			d := l.When("object-" + strconv.Itoa(i))
			require.GreaterOrEqual(t, d, 2500*time.Millisecond, "object %d of %d failing", i+1, i+1)
			require.LessOrEqual(t, d, 5*time.Second, "object %d of %d failing", i+1, i+1)
		}
		for i := 100; i < 200; i++ {
			d := l.When("object-" + strconv.Itoa(i))
			require.GreaterOrEqual(t, d, 30*time.Second, "object %d of %d failing", i+1, i+1)
			require.LessOrEqual(t, d, time.Minute, "object %d of %d failing", i+1, i+1)
		}
		for i := range 101 {
			l.Forget("object-" + strconv.Itoa(i))
		}
		time.Sleep(time.Second) // past the probe
		l.When("object-0")      // this second's probe
		d := l.When("object-1")
		require.LessOrEqual(t, d, 5*time.Second, "99 objects failing again")
	})
}

// A limiter built without a guard gets one of its own, NewGuard(50, 1):
// fifty requeues in a row go ahead at their delay (49 on its tokens, the
// last as the probe), and the next is denied. WithGuard(nil) turns it off, WithGuard(g) names
// another, and a guard in the policy takes the place of both.
func TestGuardByDefault(t *testing.T) {
	p := policy.Constant(time.Millisecond)
	denied := func(l interface{ When(string) time.Duration }, n int) int {
		denials := 0
		for i := range n {
			if l.When("object-"+strconv.Itoa(i)) > time.Millisecond {
				denials++
			}
		}
		return denials
	}
	synctest.Test(t, func(t *testing.T) {
		require.Equal(t, 1, denied(retrykube.NewRateLimiter[string](p), 51), "its own guard")
		require.Zero(t, denied(retrykube.NewRateLimiter[string](p, retrykube.WithGuard(nil)), 1000), "no guard")

		g := policy.NewGuard(3, 1)
		require.Equal(t, 1, denied(retrykube.NewRateLimiter[string](p, retrykube.WithGuard(g)), 4), "a named guard")
		require.Zero(t, g.Tokens(), "the named guard is the one used")

		inPolicy := policy.NewGuard(10, 1)
		l := retrykube.NewRateLimiter[string](p.WithGuard(inPolicy), retrykube.WithGuard(nil))
		require.Equal(t, 1, denied(l, 11), "the policy's guard, whatever WithGuard says")
		require.Zero(t, inPolicy.Tokens())
	})
}
