package bench

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v4"
	cenkalti "github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	sethvargo "github.com/sethvargo/go-retry"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// The kubelet schedule every scenario that has delays is expressed in.
const (
	base     = 10 * time.Second
	factor   = 2
	capDelay = 300 * time.Second
)

var errFlaky = errors.New("flaky")

// op succeeds. It is not inlined, so that every library and the floor pay
// for one real call.
//
//go:noinline
func op(context.Context) error { return nil }

// flaky fails n times, then succeeds, then starts over: one value serves
// every iteration of a benchmark.
type flaky struct{ n, left int }

//go:noinline
func (f *flaky) op(context.Context) error {
	if f.left > 0 {
		f.left--
		return errFlaky
	}
	f.left = f.n
	return nil
}

var sink error

// ctx is every scenario's context. A package variable, as real code gets its
// context from its caller: a local context.Background() would let the
// compiler see through the floor's ctx.Err() check and remove it.
var ctx = context.Background()

// lib runs one library's variant of a scenario as a sub-benchmark named
// lib=NAME, so that benchstat -col /lib puts the libraries side by side with
// the floor first.
func lib(b *testing.B, name string, body func(b *testing.B)) {
	b.Run("lib="+name, func(b *testing.B) {
		b.ReportAllocs()
		body(b)
	})
}

func BenchmarkFirstTry(b *testing.B) {
	lib(b, "bare", func(b *testing.B) {
		for b.Loop() {
			if err := ctx.Err(); err != nil {
				sink = err
				continue
			}
			sink = op(ctx)
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		p := policy.Default()
		for b.Loop() {
			sink = retry.Do(ctx, op, p)
		}
	})
	lib(b, "cenkalti", func(b *testing.B) {
		for b.Loop() {
			// An ExponentialBackOff is stateful: each call needs its own.
			bo := &cenkalti.ExponentialBackOff{InitialInterval: base, Multiplier: factor, MaxInterval: capDelay}
			_, sink = cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, op(ctx) }, cenkalti.WithBackOff(bo))
		}
	})
	lib(b, "avast", func(b *testing.B) {
		opts := []avast.Option{avast.Context(ctx), avast.Attempts(0), avast.Delay(base), avast.MaxDelay(capDelay), avast.DelayType(avast.BackOffDelay)}
		for b.Loop() {
			sink = avast.Do(func() error { return op(ctx) }, opts...)
		}
	})
	lib(b, "sethvargo", func(b *testing.B) {
		for b.Loop() {
			// Its Backoff is stateful too (the WithMaxRetries sharing bug):
			// built per call.
			bo := sethvargo.WithCappedDuration(capDelay, sethvargo.NewExponential(base))
			sink = sethvargo.Do(ctx, bo, op)
		}
	})
	lib(b, "failsafe", func(b *testing.B) {
		ex := failsafe.With[any](retrypolicy.NewBuilder[any]().WithBackoff(base, capDelay).WithMaxAttempts(-1).Build()).WithContext(ctx)
		for b.Loop() {
			sink = ex.Run(func() error { return op(ctx) })
		}
	})
	lib(b, "k8s", func(b *testing.B) {
		bo := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
		for b.Loop() {
			sink = wait.ExponentialBackoffWithContext(ctx, bo, func(ctx context.Context) (bool, error) {
				return op(ctx) == nil, nil
			})
		}
	})
}

// BenchmarkThreeFailures: three failures, then success, with zero delays.
func BenchmarkThreeFailures(b *testing.B) {
	lib(b, "bare", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		for b.Loop() {
			for {
				if err := ctx.Err(); err != nil {
					sink = err
					break
				}
				if sink = f.op(ctx); sink == nil {
					break
				}
			}
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		p := policy.Constant(0)
		for b.Loop() {
			sink = retry.Do(ctx, f.op, p)
		}
	})
	lib(b, "cenkalti", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		for b.Loop() {
			_, sink = cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, f.op(ctx) }, cenkalti.WithBackOff(&cenkalti.ZeroBackOff{}))
		}
	})
	lib(b, "avast", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		opts := []avast.Option{avast.Context(ctx), avast.Attempts(0), avast.Delay(0), avast.DelayType(avast.FixedDelay)}
		for b.Loop() {
			sink = avast.Do(func() error { return f.op(ctx) }, opts...)
		}
	})
	lib(b, "sethvargo", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		// NewConstant(0) panics; a BackoffFunc says "zero, go on". Errors
		// must be marked retryable, which allocates on every failure.
		bo := sethvargo.BackoffFunc(func() (time.Duration, bool) { return 0, false })
		for b.Loop() {
			sink = sethvargo.Do(ctx, bo, func(ctx context.Context) error {
				if err := f.op(ctx); err != nil {
					return sethvargo.RetryableError(err)
				}
				return nil
			})
		}
	})
	lib(b, "failsafe", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		ex := failsafe.With[any](retrypolicy.NewBuilder[any]().WithDelay(0).WithMaxAttempts(-1).Build()).WithContext(ctx)
		for b.Loop() {
			sink = ex.Run(func() error { return f.op(ctx) })
		}
	})
	lib(b, "k8s", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		// A zero Duration still waits on a time.After timer each time.
		bo := wait.Backoff{Duration: 0, Steps: 4}
		for b.Loop() {
			sink = wait.ExponentialBackoffWithContext(ctx, bo, func(ctx context.Context) (bool, error) {
				return f.op(ctx) == nil, nil
			})
		}
	})
}

// BenchmarkFirstTryParallel: first-try success from every core, sharing
// what each library lets be shared.
func BenchmarkFirstTryParallel(b *testing.B) {
	parallel := func(b *testing.B, body func() error) {
		b.RunParallel(func(pb *testing.PB) {
			var err error
			for pb.Next() {
				err = body()
			}
			if err != nil {
				b.Error(err)
			}
		})
	}
	lib(b, "bare", func(b *testing.B) {
		parallel(b, func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return op(ctx)
		})
	})
	lib(b, "retrykit", func(b *testing.B) {
		p := policy.Default()
		parallel(b, func() error { return retry.Do(ctx, op, p) })
	})
	lib(b, "cenkalti", func(b *testing.B) {
		parallel(b, func() error {
			bo := &cenkalti.ExponentialBackOff{InitialInterval: base, Multiplier: factor, MaxInterval: capDelay}
			_, err := cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, op(ctx) }, cenkalti.WithBackOff(bo))
			return err
		})
	})
	lib(b, "avast", func(b *testing.B) {
		opts := []avast.Option{avast.Context(ctx), avast.Attempts(0), avast.Delay(base), avast.MaxDelay(capDelay), avast.DelayType(avast.BackOffDelay)}
		parallel(b, func() error { return avast.Do(func() error { return op(ctx) }, opts...) })
	})
	lib(b, "sethvargo", func(b *testing.B) {
		parallel(b, func() error {
			return sethvargo.Do(ctx, sethvargo.WithCappedDuration(capDelay, sethvargo.NewExponential(base)), op)
		})
	})
	lib(b, "failsafe", func(b *testing.B) {
		ex := failsafe.With[any](retrypolicy.NewBuilder[any]().WithBackoff(base, capDelay).WithMaxAttempts(-1).Build()).WithContext(ctx)
		parallel(b, func() error { return ex.Run(func() error { return op(ctx) }) })
	})
	lib(b, "k8s", func(b *testing.B) {
		bo := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
		parallel(b, func() error {
			return wait.ExponentialBackoffWithContext(ctx, bo, func(ctx context.Context) (bool, error) {
				return op(ctx) == nil, nil
			})
		})
	})
}

var sinkDelay time.Duration

// BenchmarkDelaySequence computes the first 20 delays of 10s ×2 capped at
// 300s. avast (its delay functions need its unexported Config) and failsafe
// (no public delay computation) cannot express it.
func BenchmarkDelaySequence(b *testing.B) {
	const n = 20
	lib(b, "bare", func(b *testing.B) {
		for b.Loop() {
			d := base
			for range n {
				sinkDelay = d
				d = min(d*factor, capDelay)
			}
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		p := policy.Default()
		for b.Loop() {
			for i := 1; i <= n; i++ {
				sinkDelay = p.Backoff(i, 0)
			}
		}
	})
	lib(b, "cenkalti", func(b *testing.B) {
		for b.Loop() {
			bo := &cenkalti.ExponentialBackOff{InitialInterval: base, Multiplier: factor, MaxInterval: capDelay}
			bo.Reset()
			for range n {
				sinkDelay = bo.NextBackOff()
			}
		}
	})
	lib(b, "sethvargo", func(b *testing.B) {
		for b.Loop() {
			bo := sethvargo.WithCappedDuration(capDelay, sethvargo.NewExponential(base))
			for range n {
				sinkDelay, _ = bo.Next()
			}
		}
	})
	lib(b, "k8s", func(b *testing.B) {
		for b.Loop() {
			// Steps must outlast the sequence: k8s stops the back-off when
			// the cap is hit (kubernetes#131122).
			bo := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
			for range n {
				sinkDelay = bo.Step()
			}
		}
	})
}

// BenchmarkRealWait: three failures with a real 1ms wait after each, then
// success: timer handling.
func BenchmarkRealWait(b *testing.B) {
	const d = time.Millisecond
	lib(b, "bare", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		t := time.NewTimer(time.Hour)
		t.Stop()
		for b.Loop() {
			for f.op(ctx) != nil {
				t.Reset(d)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
			}
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		p := policy.Constant(d)
		for b.Loop() {
			sink = retry.Do(ctx, f.op, p)
		}
	})
	lib(b, "cenkalti", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		for b.Loop() {
			_, sink = cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, f.op(ctx) }, cenkalti.WithBackOff(cenkalti.NewConstantBackOff(d)))
		}
	})
	lib(b, "avast", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		opts := []avast.Option{avast.Context(ctx), avast.Attempts(0), avast.Delay(d), avast.DelayType(avast.FixedDelay)}
		for b.Loop() {
			sink = avast.Do(func() error { return f.op(ctx) }, opts...)
		}
	})
	lib(b, "sethvargo", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		for b.Loop() {
			sink = sethvargo.Do(ctx, sethvargo.NewConstant(d), func(ctx context.Context) error {
				if err := f.op(ctx); err != nil {
					return sethvargo.RetryableError(err)
				}
				return nil
			})
		}
	})
	lib(b, "failsafe", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		ex := failsafe.With[any](retrypolicy.NewBuilder[any]().WithDelay(d).WithMaxAttempts(-1).Build()).WithContext(ctx)
		for b.Loop() {
			sink = ex.Run(func() error { return f.op(ctx) })
		}
	})
	lib(b, "k8s", func(b *testing.B) {
		f := &flaky{n: 3, left: 3}
		bo := wait.Backoff{Duration: d, Factor: 1, Steps: 4}
		for b.Loop() {
			sink = wait.ExponentialBackoffWithContext(ctx, bo, func(ctx context.Context) (bool, error) {
				return f.op(ctx) == nil, nil
			})
		}
	})
}

// TestScenariosAgree checks that every variant really does what its
// scenario says (the benchmarks would happily time a variant that fails).
func TestScenariosAgree(t *testing.T) {
	f := &flaky{n: 3, left: 3}
	calls := 0
	count := func(ctx context.Context) error { calls++; return f.op(ctx) }
	check := func(name string, err error) {
		t.Helper()
		if err != nil || calls != 4 {
			t.Errorf("%s: err = %v after %d calls, want nil after 4", name, err, calls)
		}
		calls = 0
	}
	check("retrykit", retry.Do(ctx, count, policy.Constant(0)))
	_, err := cenkalti.Retry(ctx, func() (struct{}, error) { return struct{}{}, count(ctx) }, cenkalti.WithBackOff(&cenkalti.ZeroBackOff{}))
	check("cenkalti", err)
	check("avast", avast.Do(func() error { return count(ctx) }, avast.Context(ctx), avast.Attempts(0), avast.Delay(0), avast.DelayType(avast.FixedDelay)))
	check("sethvargo", sethvargo.Do(ctx, sethvargo.BackoffFunc(func() (time.Duration, bool) { return 0, false }), func(ctx context.Context) error {
		if err := count(ctx); err != nil {
			return sethvargo.RetryableError(err)
		}
		return nil
	}))
	check("failsafe", failsafe.With[any](retrypolicy.NewBuilder[any]().WithDelay(0).WithMaxAttempts(-1).Build()).WithContext(ctx).Run(func() error { return count(ctx) }))
	check("k8s", wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Steps: 4}, func(ctx context.Context) (bool, error) { return count(ctx) == nil, nil }))

	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	p := policy.Default()
	bo := &cenkalti.ExponentialBackOff{InitialInterval: base, Multiplier: factor, MaxInterval: capDelay}
	bo.Reset()
	sv := sethvargo.WithCappedDuration(capDelay, sethvargo.NewExponential(base))
	kb := wait.Backoff{Duration: base, Factor: factor, Steps: math.MaxInt32, Cap: capDelay}
	for i, w := range want {
		w *= time.Second
		svd, _ := sv.Next()
		for name, got := range map[string]time.Duration{"retrykit": p.Backoff(i+1, 0), "cenkalti": bo.NextBackOff(), "sethvargo": svd, "k8s": kb.Step()} {
			if got != w {
				t.Errorf("%s: delay %d = %v, want %v", name, i+1, got, w)
			}
		}
	}
}
