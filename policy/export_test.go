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

var ResetOnSuccess = resetOnSuccess

// InFlight returns the calls g counts in flight.
func InFlight(g *Guard) int64 { return g.calls.Load() }

// Running returns the attempts g counts as running.
func Running(g *Guard) int64 { return g.running.Load() }

// Turned returns t's channel if its turn has come, or nil.
func Turned(t *Turn) <-chan struct{} {
	select {
	case <-t.C:
		return t.C
	default:
		return nil
	}
}
