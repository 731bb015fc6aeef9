package policy

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// The settings a policy keeps to itself, exported to this package's tests
// (Hedge is the Hedging as set, before Policy.Hedging's zeroing).

func (p Policy) Delay(n int) time.Duration { return p.delay(n) }
func (p Policy) Cap() time.Duration        { return p.cfg().cap }
func (p Policy) Jitter() backoff.Jitter    { return p.cfg().jitter }
func (p Policy) Hedge() Hedging            { return p.cfg().hedge }

const (
	DefaultMaxHint   = defaultMaxHint
	MaxHedgeInFlight = maxHedgeInFlight
)

var ResetOnSuccess = resetOnSuccess
