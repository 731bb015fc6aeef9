package policy

import (
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
)

// The parts of a policy that package retry needs and users do not reach
// package retry through package plumb, so that they are not exported here.
func init() {
	plumb.Simple = func(p any) bool { return !p.(Policy).cfg().notSimple }
	plumb.StartsOver = func(p any, succeeded bool, ran, idle time.Duration) bool {
		return p.(Policy).cfg().reset.startsOver(succeeded, ran, idle)
	}
	plumb.BudgetCall = func(b any, now time.Time) { b.(*Budget).call(now) }
	plumb.BudgetTryRetry = func(b any, now time.Time) bool { return b.(*Budget).tryRetry(now) }
	plumb.GuardSuccess = func(g any) { g.(*Guard).success() }
	plumb.GuardFailure = func(g any) { g.(*Guard).failure() }
	plumb.GuardAllowRetry = func(g any) bool { return g.(*Guard).allowRetry() }
}
