package policy

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// The settings a policy keeps to itself, exported to this package's tests.

func (p Policy) Delay(n int) time.Duration     { return p.delay(n) }
func (p Policy) MaxHint() time.Duration        { return p.cfg().maxHint }
func (p Policy) MaxAttempts() int              { return p.cfg().maxAttempts }
func (p Policy) MaxElapsed() time.Duration     { return p.cfg().maxElapsed }
func (p Policy) Cap() time.Duration            { return p.cfg().cap }
func (p Policy) Clock() Clock                  { return p.cfg().clock }
func (p Policy) Jitter() backoff.Jitter        { return p.cfg().jitter }
func (p Policy) AttemptTimeout() time.Duration { return p.cfg().attemptTime }
func (p Policy) ResetRule() ResetRule          { return p.cfg().reset }
func (p Policy) Guard() *Guard                 { return p.cfg().guard }
func (p Policy) Hedge() Hedging                { return p.cfg().hedge }

const (
	DefaultMaxHint   = defaultMaxHint
	MaxHedgeInFlight = maxHedgeInFlight
)

var ResetOnSuccess = resetOnSuccess
