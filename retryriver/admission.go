package retryriver

import (
	"time"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
)

// admission is the policy's guard, as the middleware asks it before a
// retry runs and tells it how every run ended; nil: no guard.
type admission struct{ g *admit.Guard }

func admissionOf(p policy.Policy) admission { return admission{(*admit.Guard)(p.Guard())} }

// allow reports whether a retry may run at now: while the guard has a
// whole token left, or as its probe of the second. It takes nothing; what
// record is told of the run is what costs.
func (a admission) allow(now time.Time) bool { return a.g == nil || a.g.Allow(now) }

// record tells the guard how a run ended; admitted says the run was a retry
// that allow admitted.
func (a admission) record(admitted bool, o admit.Outcome) {
	if a.g != nil {
		a.g.Record(admitted, o)
	}
}
