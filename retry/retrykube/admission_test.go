package retrykube_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry/retrykube"
)

// recorder is an admission that answers as told and keeps what it was told.
type recorder struct {
	allow   bool
	records []string
}

func (r *recorder) Allow(time.Time) bool { return r.allow }

func (r *recorder) Record(retry, failed bool) {
	s := map[bool]string{true: "retry ", false: "first "}[retry] + map[bool]string{true: "failed", false: "succeeded"}[failed]
	r.records = append(r.records, s)
}

// The limiter tells the admission how each reconcile ended and asks it
// before each requeue; a denied requeue waits the hold, between 30 s and
// a minute, or its own delay when that is longer.
func TestAdmission(t *testing.T) {
	a := &recorder{allow: true}
	l := retrykube.WithAdmission(retrykube.NewRateLimiter[string](policy.Constant(time.Second)), retrykube.Admission(a))
	require.Equal(t, time.Second, l.When("a"), "admitted: the item's own delay")
	a.allow = false
	for range 20 {
		d := l.When("a")
		require.GreaterOrEqual(t, d, 30*time.Second)
		require.LessOrEqual(t, d, time.Minute)
	}
	long := retrykube.WithAdmission(retrykube.NewRateLimiter[string](policy.Constant(2*time.Minute)), retrykube.Admission(&recorder{}))
	require.Equal(t, 2*time.Minute, long.When("a"), "denied: never sooner than its own delay")
	l.Forget("a")
	l.Forget("never requeued")
	require.Equal(t, []string{"first failed", "retry failed"}, a.records[:2])
	require.Equal(t, []string{"retry succeeded", "first succeeded"}, a.records[len(a.records)-2:])
}
