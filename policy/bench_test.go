//go:build go1.25

package policy_test

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

var sinkDelay time.Duration

// BenchmarkDelay is the delay computation per kind of policy, for attempts
// 1 to 20.
func BenchmarkDelay(b *testing.B) {
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"default", policy.Default()},
		{"exponential-x1.6", policy.Exponential(time.Second).WithFactor(1.6).WithCap(2 * time.Minute)},
		{"constant", policy.Constant(time.Second)},
		{"custom", policy.Custom(backoff.ScheduleFunc(func(n int) time.Duration { return time.Duration(n) * time.Second }))},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = n%20 + 1
				sinkDelay = tt.p.Delay(n)
			}
		})
	}
}

// BenchmarkBackoffJitter is a jittered delay, drawn from the default
// (concurrency-safe) source.
func BenchmarkBackoffJitter(b *testing.B) {
	for _, k := range []backoff.JitterKind{backoff.Full, backoff.Decorrelated, backoff.Symmetric} {
		j := backoff.Jitter{Kind: k}
		if k == backoff.Symmetric {
			j.Fraction = 0.2
		}
		p := policy.Default().WithJitter(j)
		b.Run(policy.JitterName(k), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			var prev time.Duration
			for b.Loop() {
				n = n%20 + 1
				prev = p.Backoff(n, prev)
			}
			sinkDelay = prev
		})
	}
}
