//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func succeed(context.Context) error { return nil }

func succeedValue(context.Context) (int, error) { return 42, nil }

// failThenSucceed fails n times, then succeeds, starting over after success.
type failThenSucceed struct{ n, left int }

func (f *failThenSucceed) op(context.Context) error {
	if f.left > 0 {
		f.left--
		return errFlaky
	}
	f.left = f.n
	return nil
}

func TestAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	ctx := context.Background()
	def := policy.Default()
	retries := &failThenSucceed{n: 3, left: 3}
	zero := policy.Constant(0)
	limited := def.WithMaxAttempts(3).WithMaxElapsed(time.Minute)
	guarded := def.WithGuard(policy.NewGuard(50, 1))
	zeroGuarded := zero.WithGuard(policy.NewGuard(1e6, 1))
	timed := def.WithAttemptTimeout(time.Second)
	// A call that retries allocates one context, which carries the number
	// of its attempts after the first (see retry.Attempt), however many
	// times it retries.
	const numbering = 1
	tests := []struct {
		name string
		run  func()
		want float64
	}{
		{"Do first try", func() { _ = retry.Do(ctx, succeed, def) }, 0},
		{"DoValue first try", func() { _, _ = retry.DoValue(ctx, succeedValue, def) }, 0},
		{"Do zero-delay retries", func() { _ = retry.Do(ctx, retries.op, zero) }, numbering},
		{"Do first try with limits", func() { _ = retry.Do(ctx, succeed, limited) }, 0},
		{"Do first try with a guard", func() { _ = retry.Do(ctx, succeed, guarded) }, 0},
		{"Do zero-delay retries with a guard", func() { _ = retry.Do(ctx, retries.op, zeroGuarded) }, numbering},
		// The attempt's own context with its deadline, and the deadline's
		// timer: the price of an attempt timeout, stated in the README.
		{"Do first try with an attempt timeout", func() { _ = retry.Do(ctx, succeed, timed) }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, testing.AllocsPerRun(1000, tt.run), "allocations per call")
		})
	}
}

func TestOneTimerPerCall(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	// Inside a synctest bubble the real clock's waits take no real time. A
	// call that waits allocates its timer once, and the context that
	// numbers its retries once: two waits or eight, the count is the same.
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := policy.Constant(time.Second)
		few := &failThenSucceed{n: 2, left: 2}
		many := &failThenSucceed{n: 8, left: 8}
		allocsFew := testing.AllocsPerRun(50, func() { _ = retry.Do(ctx, few.op, p) })
		allocsMany := testing.AllocsPerRun(50, func() { _ = retry.Do(ctx, many.op, p) })
		require.Equal(t, allocsFew, allocsMany, "allocations must not grow with the number of waits")
		require.LessOrEqual(t, allocsFew, 4.0, "one timer (and its channel) and one numbered context per call")
	})
}

var sinkErr error

func BenchmarkDoFirstTry(b *testing.B) {
	ctx, p := context.Background(), policy.Default()
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = retry.Do(ctx, succeed, p)
	}
}

func BenchmarkDoValueFirstTry(b *testing.B) {
	ctx, p := context.Background(), policy.Default()
	b.ReportAllocs()
	for b.Loop() {
		_, sinkErr = retry.DoValue(ctx, succeedValue, p)
	}
}

func BenchmarkDoThreeZeroDelayFailures(b *testing.B) {
	ctx, p := context.Background(), policy.Constant(0)
	f := &failThenSucceed{n: 3, left: 3}
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = retry.Do(ctx, f.op, p)
	}
}

func BenchmarkDoFirstTryParallel(b *testing.B) {
	ctx, p := context.Background(), policy.Default()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var err error
		for pb.Next() {
			err = retry.Do(ctx, succeed, p)
		}
		if err != nil {
			b.Error(err)
		}
	})
}

// benchCtx is the benchmarks' context: a package variable, so that the
// compiler cannot see through the floor's ctx.Err() check.
var benchCtx = context.Background()

//go:noinline
func succeedNoinline(context.Context) error { return nil }

// BenchmarkBareFirstTry is the floor Do is measured against: the operation
// (not inlined) called directly after a context check.
func BenchmarkBareFirstTry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := benchCtx.Err(); err != nil {
			sinkErr = err
			continue
		}
		sinkErr = succeedNoinline(benchCtx)
	}
}

// BenchmarkDoFirstTryNoinline is Do on the same operation as the floor.
func BenchmarkDoFirstTryNoinline(b *testing.B) {
	p := policy.Default()
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = retry.Do(benchCtx, succeedNoinline, p)
	}
}

func BenchmarkDoExhausted(b *testing.B) {
	ctx, p := context.Background(), policy.Constant(0).WithMaxAttempts(3)
	fail := func(context.Context) error { return errFlaky }
	b.ReportAllocs()
	for b.Loop() {
		if err := retry.Do(ctx, fail, p); !errors.Is(err, retry.ErrExhausted) {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoFirstTryGuarded is a first-try success under the default
// guard, which counts the call in flight and hears its success.
func BenchmarkDoFirstTryGuarded(b *testing.B) {
	p := policy.Default().WithGuard(policy.NewGuard(50, 1))
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = retry.Do(benchCtx, succeedNoinline, p)
	}
}
