package admit

import "reflect"

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

// LatencyBytes returns the size of a guard's latency estimate, which the
// guard allocates at its first Observe.
func LatencyBytes() uintptr { return reflect.TypeFor[latency]().Size() }

// HasLatency reports whether g has allocated its latency estimate.
func HasLatency(g *Guard) bool { return g.lat.Load() != nil }
