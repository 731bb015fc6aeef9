package retrykube_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrykube"
)

// nilClock is a clock whose methods need a receiver, so that a typed nil of
// it panics on Now.
type nilClock struct{ now time.Time }

func (c *nilClock) Now() time.Time                       { return c.now }
func (c *nilClock) After(time.Duration) <-chan time.Time { return nil }

// An invalid policy cannot come back from NewRateLimiter as an error: every
// requeue reports it through utilruntime.HandleError and waits 30 s to a
// minute, and the limiter still counts and forgets. A typed nil clock is
// such a policy; it once panicked on the first When.
func TestInvalidPolicyIsReportedOnEveryRequeue(t *testing.T) {
	var reported []error
	old := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		reported = append(reported, err)
	}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = old })

	for name, p := range map[string]policy.Policy{
		"a typed nil clock":  policy.Constant(time.Second).WithClock((*nilClock)(nil)),
		"a negative delay":   policy.Constant(-time.Second),
		"an invalid guard":   policy.Constant(time.Second).WithGuard(policy.NewGuard(0, 1)),
		"a negative attempt": policy.Constant(time.Second).WithMaxAttempts(-1),
	} {
		t.Run(name, func(t *testing.T) {
			reported = nil
			l := retrykube.NewRateLimiter[string](p)
			for i := 1; i <= 3; i++ {
				d := l.When("default/web")
				require.GreaterOrEqual(t, d, 30*time.Second, "requeue %d", i)
				require.LessOrEqual(t, d, time.Minute, "requeue %d", i)
				require.Len(t, reported, i, "every requeue reports the policy")
				require.ErrorIs(t, reported[i-1], policy.ErrInvalid)
				require.ErrorContains(t, reported[i-1], "retrykube: ")
			}
			require.Equal(t, 3, l.NumRequeues("default/web"))
			l.Forget("default/web")
			require.Zero(t, l.NumRequeues("default/web"))
		})
	}
}
