package policy

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// What package retry reaches through package plumb, and the settings a
// policy keeps to itself, exported to this package's tests.

func (b *Budget) Call(now time.Time)          { b.call(now) }
func (b *Budget) TryRetry(now time.Time) bool { return b.tryRetry(now) }
func (g *Guard) Success()                     { g.success() }
func (g *Guard) Failure()                     { g.failure() }
func (g *Guard) AllowRetry() bool             { return g.allowRetry() }
func (l *Latency) Observe(d time.Duration)    { l.observe(d) }
func (p Policy) Simple() bool                 { return p.cfg().run.Simple }
func (r ResetRule) StartsOver(succeeded bool, ran, idle time.Duration) bool {
	return r.startsOver(succeeded, ran, idle)
}

func (p Policy) Delay(n int) time.Duration     { return p.delay(n) }
func (p Policy) MaxHint() time.Duration        { return p.cfg().maxHint }
func (p Policy) MaxAttempts() int              { return p.cfg().maxAttempts }
func (p Policy) MaxElapsed() time.Duration     { return p.cfg().maxElapsed }
func (p Policy) Cap() time.Duration            { return p.cfg().cap }
func (p Policy) Clock() Clock                  { return p.cfg().clock }
func (p Policy) Jitter() backoff.Jitter        { return p.cfg().jitter }
func (p Policy) AttemptTimeout() time.Duration { return p.cfg().attemptTime }
func (p Policy) ResetRule() ResetRule          { return p.cfg().reset }
func (p Policy) Budget() *Budget               { return p.cfg().budget }
func (p Policy) Guard() *Guard                 { return p.cfg().guard }
func (p Policy) Hedge() Hedge                  { return p.cfg().hedge }

const (
	DefaultMaxHint   = defaultMaxHint
	MaxHedgeInFlight = maxHedgeInFlight
)

var ResetOnSuccess = resetOnSuccess
