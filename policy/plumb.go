package policy

import (
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
)

// The parts of a policy that package retry and its integrations need and
// users do not reach them through package plumb, so that they are not
// exported here.
func init() {
	plumb.Of = func(p any) *plumb.Settings { return &p.(Policy).cfg().run }
	plumb.BudgetCall = func(b any, now time.Time) { b.(*Budget).call(now) }
	plumb.BudgetTryRetry = func(b any, now time.Time) bool { return b.(*Budget).tryRetry(now) }
	plumb.GuardSuccess = func(g any) { g.(*Guard).success() }
	plumb.GuardFailure = func(g any) { g.(*Guard).failure() }
	plumb.GuardAllowRetry = func(g any) bool { return g.(*Guard).allowRetry() }
	plumb.LatencyObserve = func(l any, d time.Duration) { l.(*Latency).observe(d) }
}
