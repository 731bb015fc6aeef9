package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// FuzzSchedule checks the bounds every schedule must keep for every input:
// never negative, never above the cap, never decreasing as the attempt grows
// (without jitter), and no panic, up to attempt math.MaxInt; and a Strategy
// built on the schedule hands out its first delays exactly.
func FuzzSchedule(f *testing.F) {
	f.Add(int64(10*time.Second), 2.0, int64(300*time.Second), 1)
	f.Add(int64(10*time.Second), 2.0, int64(300*time.Second), math.MaxInt)
	f.Add(int64(time.Second), 1.6, int64(0), 64)
	f.Add(int64(1), 1.0000001, int64(math.MaxInt64), math.MaxInt-1)
	f.Add(int64(math.MaxInt64), 3.0, int64(-1), 2)
	f.Add(int64(-5), math.NaN(), int64(5), -7)
	f.Add(int64(7), math.Inf(1), int64(0), 3)
	f.Add(int64(3), 1e308, int64(0), 40)
	f.Fuzz(func(t *testing.T, base int64, factor float64, limit int64, n int) {
		scheds := []backoff.Schedule{
			backoff.Exponential(time.Duration(base), factor),
			backoff.Constant(time.Duration(base)),
		}
		for _, s := range scheds {
			capped := backoff.Cap(s, time.Duration(limit))
			d, next := capped.Delay(n), capped.Delay(satInc(n))
			if d < 0 || next < 0 {
				t.Fatalf("%#v: Delay(%d) = %v, Delay(n+1) = %v: negative", s, n, d, next)
			}
			if limit > 0 && (d > time.Duration(limit) || next > time.Duration(limit)) {
				t.Fatalf("%#v: Delay(%d) = %v above the cap %v", s, n, d, time.Duration(limit))
			}
			if next < d {
				t.Fatalf("%#v cap %v: Delay(%d) = %v > Delay(%d) = %v", s, time.Duration(limit), n, d, satInc(n), next)
			}
			if raw := s.Delay(n); raw < 0 {
				t.Fatalf("%#v: uncapped Delay(%d) = %v", s, n, raw)
			}
			st := backoff.NewStrategy(capped)
			for k := 1; k <= 66; k++ {
				if got, want := st.Next(), capped.Delay(k); got != want {
					t.Fatalf("%#v cap %v: Next #%d = %v, want Delay(%d) = %v", s, time.Duration(limit), k, got, k, want)
				}
			}
		}
	})
}

// FuzzJitter checks that every jitter kind stays within [0, cap] for every
// input.
func FuzzJitter(f *testing.F) {
	f.Add(uint8(backoff.Full), 0.0, int64(10*time.Second), int64(0), int64(10*time.Second), int64(300*time.Second), uint64(0))
	f.Add(uint8(backoff.Symmetric), 0.2, int64(300*time.Second), int64(300*time.Second), int64(10*time.Second), int64(300*time.Second), uint64(math.MaxUint64))
	f.Add(uint8(backoff.Decorrelated), 0.0, int64(0), int64(math.MaxInt64), int64(1), int64(math.MaxInt64), uint64(12345))
	f.Add(uint8(backoff.Proportional), 1e300, int64(math.MaxInt64), int64(-1), int64(-1), int64(-1), uint64(1))
	f.Fuzz(func(t *testing.T, kind uint8, frac float64, d, prev, base, limit int64, u uint64) {
		j := backoff.Jitter{Kind: backoff.JitterKind(kind), Fraction: frac}
		got := j.Apply(time.Duration(d), time.Duration(prev), time.Duration(base), time.Duration(limit), u)
		if got < 0 {
			t.Fatalf("%+v: Apply = %v, negative", j, got)
		}
		if limit > 0 && got > time.Duration(limit) {
			t.Fatalf("%+v: Apply = %v above the cap %v", j, got, time.Duration(limit))
		}
	})
}

func satInc(n int) int {
	if n == math.MaxInt {
		return n
	}
	return n + 1
}
