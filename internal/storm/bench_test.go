//go:build go1.25

package storm_test

import (
	"testing"

	"github.com/retrykit/retrykit/internal/storm"
)

// BenchmarkStorm runs each client through the storm, the sporadic failures
// and the outage on the virtual clock, and reports what they measured
// (run it with -benchtime 1x: the runs are deterministic):
// recovered-s is the recovery after the stall in seconds (-1: never),
// success-% the share of calls that succeed, attempts/call the amplification.
func BenchmarkStorm(b *testing.B) {
	for _, c := range storm.Clients() {
		b.Run(c.Name, func(b *testing.B) {
			var st, sp, down storm.Result
			for b.Loop() {
				st = storm.RunVirtual(storm.Storm(), c.For(storm.Storm()))
				sp = storm.RunVirtual(storm.Sporadic(), c.For(storm.Storm()))
				down = storm.RunVirtual(storm.Down(storm.SlowOutage), c.For(storm.Storm()))
			}
			rec, ok := st.Recovered(stallEnd, 0.95)
			secs := rec.Seconds()
			if !ok {
				secs = -1
			}
			b.ReportMetric(secs, "recovered-s")
			b.ReportMetric(100*st.Success(), "storm-success-%")
			b.ReportMetric(100*sp.Success(), "sporadic-success-%")
			b.ReportMetric(down.Amplification(), "down-attempts/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}
