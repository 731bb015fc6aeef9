package policy

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// The settings a policy keeps to itself, exported to this package's tests.

func (p Policy) Delay(n int) time.Duration { return p.delay(n) }
func (p Policy) Cap() time.Duration        { return p.cfg().cap }
func (p Policy) Jitter() backoff.Jitter    { return p.cfg().jitter }

const (
	DefaultMaxHint   = defaultMaxHint
	MaxHedgeInFlight = maxHedgeInFlight
)

var (
	ResetOnSuccess = resetOnSuccess
	JitterName     = jitterName
)
