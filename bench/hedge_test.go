package bench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/retrykit/retrykit/internal/tail"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// The latency scenario (internal/tail: 10 ms answers, 2 % of attempts take
// 1 s, 10,000 calls by 100 callers) with each library hedging after the
// p95 of its recent attempts, one hedge at most, inside testing/synctest.
// retrykit's estimate, kept by the policy's guard (the default one,
// NewGuard(50, 1)), covers the last 1,000 to 2,000 successes and starts
// after 200; failsafe's moving quantile gets the same age and threshold.

func hedgeClients() []struct {
	name string
	call func() tail.Caller
} {
	return []struct {
		name string
		call func() tail.Caller
	}{
		{"no hedging", func() tail.Caller {
			return func(ctx context.Context, attempt func(context.Context) error) error { return attempt(ctx) }
		}},
		{"retrykit", func() tail.Caller {
			p := policy.Constant(10 * time.Millisecond).WithMaxAttempts(3).
				WithGuard(policy.NewGuard(50, 1)).WithHedging(policy.Hedging{Quantile: 0.95})
			return func(ctx context.Context, attempt func(context.Context) error) error {
				return retry.Hedge(ctx, attempt, p)
			}
		}},
		{"failsafe", func() tail.Caller {
			ex := failsafe.With[any](hedgepolicy.NewWithDelayQuantile[any](0.95, 1000, 200))
			return func(ctx context.Context, attempt func(context.Context) error) error {
				return ex.WithContext(ctx).RunWithExecution(func(e failsafe.Execution[any]) error { return attempt(e.Context()) })
			}
		}},
	}
}

// TestHedgeTail prints each library's latency percentiles and extra
// attempts in the latency scenario (go test -run TestHedgeTail -v), and
// checks that every client made every call.
func TestHedgeTail(t *testing.T) {
	for _, c := range hedgeClients() {
		var r tail.Result
		synctest.Test(t, func(t *testing.T) { r = tail.Run(tail.Tail(), c.call()) })
		if r.Failed != 0 || len(r.Latencies) != tail.Tail().Calls {
			t.Fatalf("%s: %d of %d calls failed", c.name, r.Failed, len(r.Latencies))
		}
		t.Logf("| %s | %v | %v | %v | %v | %.2f %% |", c.name,
			r.Percentile(0.5), r.Percentile(0.99), r.Percentile(0.999), r.Percentile(1), 100*r.Extra())
	}
}

// BenchmarkHedgeFastCall is the cost of a hedged call whose first attempt
// answers before the hedge delay, as nearly all do: the goroutine, the timer
// and the cancellation that Do does not need.
func BenchmarkHedgeFastCall(b *testing.B) {
	lib(b, "bare", func(b *testing.B) {
		for b.Loop() {
			sink = op(ctx)
		}
	})
	lib(b, "retrykit", func(b *testing.B) {
		p := policy.Constant(time.Millisecond).WithHedging(policy.Hedging{Delay: time.Second})
		for b.Loop() {
			sink = retry.Hedge(ctx, op, p)
		}
	})
	lib(b, "failsafe", func(b *testing.B) {
		ex := failsafe.With[any](hedgepolicy.NewWithDelay[any](time.Second)).WithContext(ctx)
		for b.Loop() {
			sink = ex.RunWithExecution(func(e failsafe.Execution[any]) error { return op(e.Context()) })
		}
	})
}
