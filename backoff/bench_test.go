//go:build go1.25

package backoff_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

var sinkDelay time.Duration

func BenchmarkScheduleDelay(b *testing.B) {
	for _, tt := range []struct {
		name string
		s    backoff.Schedule
	}{
		{"exponential-x2", backoff.Exponential(10*time.Second, 2)},
		{"exponential-x1.6", backoff.Exponential(time.Second, 1.6)},
		{"constant", backoff.Constant(time.Second)},
		{"capped-x2", backoff.Cap(backoff.Exponential(10*time.Second, 2), 300*time.Second)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = n%30 + 1
				sinkDelay = tt.s.Delay(n)
			}
		})
	}
}

func BenchmarkJitterApply(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	names := [...]string{"none", "full", "equal", "decorrelated", "proportional", "symmetric"}
	for _, j := range jitters[1:] {
		b.Run(names[j.Kind], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkDelay = j.Apply(40*time.Second, 20*time.Second, 10*time.Second, 300*time.Second, r.Uint64())
			}
		})
	}
}
