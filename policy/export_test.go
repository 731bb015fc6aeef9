package policy

import "time"

// What package retry reaches through package plumb, exported to this
// package's tests.

func (b *Budget) Call(now time.Time)          { b.call(now) }
func (b *Budget) TryRetry(now time.Time) bool { return b.tryRetry(now) }
func (g *Guard) Success()                     { g.success() }
func (g *Guard) Failure()                     { g.failure() }
func (g *Guard) AllowRetry() bool             { return g.allowRetry() }
func (p Policy) Simple() bool                 { return !p.cfg().notSimple }
func (r ResetRule) StartsOver(succeeded bool, ran, idle time.Duration) bool {
	return r.startsOver(succeeded, ran, idle)
}
