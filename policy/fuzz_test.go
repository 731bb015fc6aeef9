package policy_test

import (
	"math"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// FuzzParse checks that parsing never panics, and that whatever parses
// writes back to text that parses to the same policy.
func FuzzParse(f *testing.F) {
	for _, p := range roundTrips {
		f.Add(p.String())
	}
	for _, s := range []string{"", "default", "exponential 1s x", "constant 1s reset none", "default reset success stable 1h idle 2h", "exponential 1ns x1e308 cap 1ns", "default max-hint 1h", "constant 0s max-hint 1ns attempts 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := policy.Parse(s)
		if err != nil {
			if p != (policy.Policy{}) {
				t.Fatalf("Parse(%q) failed but returned a policy", s)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse(%q) returned an invalid policy: %v", s, err)
		}
		text, err := p.MarshalText()
		if err != nil {
			t.Fatalf("Parse(%q).MarshalText: %v", s, err)
		}
		q, err := policy.Parse(string(text))
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, text, err)
		}
		if p.String() != q.String() || p.ResetRule() != q.ResetRule() || p.Jitter() != q.Jitter() || p.MaxHint() != q.MaxHint() {
			t.Fatalf("round trip of %q: %q then %q", s, p, q)
		}
		for _, n := range []int{1, 2, 7, 64, 1 << 62} {
			if p.Delay(n) != q.Delay(n) {
				t.Fatalf("round trip of %q: Delay(%d) %v then %v", s, n, p.Delay(n), q.Delay(n))
			}
		}
	})
}

// FuzzDelay checks the policy's shortcut for doubling and constant
// schedules against the general closed form of package backoff, for every
// base, cap and attempt.
func FuzzDelay(f *testing.F) {
	f.Add(int64(10*time.Second), int64(300*time.Second), 7, true)
	f.Add(int64(1), int64(0), 64, true)
	f.Add(int64(3), int64(0), math.MaxInt, true)
	f.Add(int64(math.MaxInt64), int64(0), 2, true)
	f.Add(int64(time.Second), int64(time.Second), math.MinInt, false)
	f.Fuzz(func(t *testing.T, base, limit int64, n int, doubling bool) {
		var p policy.Policy
		var want time.Duration
		if doubling {
			p = policy.Exponential(time.Duration(base)).WithCap(time.Duration(limit))
			want = backoff.Cap(backoff.Exponential(time.Duration(base), 2), time.Duration(limit)).Delay(n)
		} else {
			p = policy.Constant(time.Duration(base)).WithCap(time.Duration(limit))
			want = backoff.Cap(backoff.Constant(time.Duration(base)), time.Duration(limit)).Delay(n)
		}
		if p.Validate() != nil {
			return
		}
		if got := p.Delay(n); got != want {
			t.Fatalf("%v: Delay(%d) = %v, want %v", p, n, got, want)
		}
		if got := p.Backoff(n, 0); got != want {
			t.Fatalf("%v: Backoff(%d, 0) = %v, want %v", p, n, got, want)
		}
	})
}
