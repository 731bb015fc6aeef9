package policy

import (
	"time"
	"unsafe"

	"github.com/retrykit/retrykit/internal/plumb"
)

// plumb.Of reads a Policy as a pointer to its Settings: these fail to
// compile unless a Policy is one pointer to a config that starts with them.
var (
	_ [0]struct{} = [unsafe.Sizeof(Policy{}) - unsafe.Sizeof((*config)(nil))]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(config{}.run)]struct{}{}
	_ *config     = Policy{}.c
)

// The parts of a policy that package retry and its integrations need and
// users do not reach them through package plumb, so that they are not
// exported here.
func init() {
	plumb.Default = &defaultConfig.run
	plumb.BudgetCall = func(b any, now time.Time) { b.(*Budget).call(now) }
	plumb.BudgetTryRetry = func(b any, now time.Time) bool { return b.(*Budget).tryRetry(now) }
	plumb.GuardSuccess = func(g any) { g.(*Guard).success() }
	plumb.GuardFailure = func(g any) { g.(*Guard).failure() }
	plumb.GuardAllowRetry = func(g any) bool { return g.(*Guard).allowRetry() }
	plumb.LatencyObserve = func(l any, d time.Duration) { l.(*Latency).observe(d) }
}
