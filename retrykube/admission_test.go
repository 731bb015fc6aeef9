package retrykube_test

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

// With a guard, an object's first failure in a row takes half the guard's
// ratio, as a first try's fast failure does, and each later failure of it
// takes one token. A requeue goes ahead at its own delay while a token is
// left. Once they are spent, a denied requeue waits a hold, or its own
// delay when that is longer, and the guard's probe (one a second) goes
// ahead. Each success (a Forget) adds the guard's ratio.
func TestGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 0.5)
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Second).WithGuard(g))
		require.Equal(t, time.Second, l.When("a"), "admitted: a token left after its failure")
		require.Equal(t, 1.75, protocol(g).Tokens(), "a first failure: half the ratio")
		require.Equal(t, time.Second, l.When("a"), "no token left: the probe of this second")
		require.Equal(t, 0.75, protocol(g).Tokens(), "a second failure in a row: one token")
		for range 20 {
			d := l.When("d")
			require.GreaterOrEqual(t, d, 2500*time.Millisecond, "denied")
			require.LessOrEqual(t, d, 5*time.Second, "denied")
		}
		require.Zero(t, protocol(g).Tokens())
		time.Sleep(time.Second)
		require.Equal(t, time.Second, l.When("e"), "the next second's probe")

		l.Forget("a") // a success: the ratio
		require.Equal(t, 0.5, protocol(g).Tokens())
		l.Forget("d")
		l.Forget("new")
		require.Equal(t, 1.5, protocol(g).Tokens())
		l.Forget("e")
		l.Forget("f")
		require.Equal(t, 2.0, protocol(g).Tokens(), "up to the capacity")

		long := retrykube.NewRateLimiter[string](policy.Constant(2 * time.Minute).WithGuard(policy.NewGuard(1, 0.5)))
		long.When("a") // the probe
		require.Equal(t, 2*time.Minute, long.When("b"), "denied: never sooner than its own delay")
	})
}

// A denied requeue waits 2.5 to 5 s while at most 100 objects are failing,
// and 30 s to a minute once more are.
func TestGuardHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := retrykube.NewRateLimiter[string](policy.Constant(time.Millisecond).WithGuard(policy.NewGuard(1, 1)))
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

// A limiter built without a guard gets one of its own, NewGuard(50, 1).
// The first failures of 99 objects go ahead at their delay (98 on its
// tokens, at half a token each, the last as the probe), and the 100th
// object's is denied. One object that fails again and again has 49
// requeues go ahead on the tokens and the 50th as the probe, and its 51st
// is denied. A guard in the policy takes its place, and is how limiters
// share one.
func TestGuardByDefault(t *testing.T) {
	p := policy.Constant(time.Millisecond)
	objects := func(i int) string { return "object-" + strconv.Itoa(i) }
	oneObject := func(int) string { return "object" }
	denied := func(l interface{ When(string) time.Duration }, n int, key func(int) string) int {
		denials := 0
		for i := range n {
			if l.When(key(i)) > time.Millisecond {
				denials++
			}
		}
		return denials
	}
	synctest.Test(t, func(t *testing.T) {
		require.Zero(t, denied(retrykube.NewRateLimiter[string](p), 99, objects), "its own guard, 99 objects")
		require.Equal(t, 1, denied(retrykube.NewRateLimiter[string](p), 100, objects), "its own guard, 100 objects")
		require.Zero(t, denied(retrykube.NewRateLimiter[string](p), 50, oneObject), "its own guard, 50 failures of one object")
		require.Equal(t, 1, denied(retrykube.NewRateLimiter[string](p), 51, oneObject), "its own guard, 51 failures of one object")
		require.Zero(t, denied(retrykube.NewRateLimiter[string](p.WithGuard(admission.Off)), 1000, objects), "no guard (tests only)")

		shared := policy.NewGuard(10, 1)
		a, b := retrykube.NewRateLimiter[string](p.WithGuard(shared)), retrykube.NewRateLimiter[string](p.WithGuard(shared))
		require.Equal(t, 1, denied(a, 20, objects), "the policy's guard: 19 objects at half a token each, the probe, then a denial")
		require.Zero(t, protocol(shared).Tokens(), "the policy's guard is the one used")
		require.Equal(t, 1, denied(b, 1, objects), "a second limiter shares it: its first object is denied")
	})
}

// Objects that fail do not slow a healthy one. After 60 objects failed
// once each, a healthy object's first requeue waits at most ten times what
// client-go's default controller limiter gives it, 5 ms.
func TestFailuresOfOthersDoNotDelayAFirstRequeue(t *testing.T) {
	const failing, slowest = 60, 10 // slowest: times client-go's delay
	firstRequeue := func(rl workqueue.TypedRateLimiter[string]) time.Duration {
		for i := range failing {
			rl.When("default/bad-" + strconv.Itoa(i))
		}
		return rl.When("default/healthy")
	}
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"full jitter", fullJitter()},
		{"no jitter", policy.Exponential(5 * time.Millisecond).WithCap(1000 * time.Second)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := firstRequeue(workqueue.DefaultTypedControllerRateLimiter[string]())
				require.Equal(t, 5*time.Millisecond, base, "client-go's default")
				got := firstRequeue(retrykube.NewRateLimiter[string](tt.p))
				require.LessOrEqual(t, got, slowest*base, "When(healthy) after %d objects failed once each", failing)
			})
		})
	}
}

// protocol returns g with the protocol that retrykit's packages drive.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }
