package policy_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// The hostile-input table of the package documentation, as a test: every
// constructor and With… method fed negative, zero, huge, NaN and infinite
// values. Each either makes a valid policy with a documented meaning or an
// invalid one whose Validate error matches ErrInvalid; none panics, and
// every policy, valid or not, gives delays within [0, cap] for every
// attempt.
func TestHostileInput(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	nan, inf := math.NaN(), math.Inf(1)
	base := policy.Exponential(time.Second)
	tests := []struct {
		name  string
		build func() policy.Policy
		valid bool
	}{
		{"Exponential(-1ns)", func() policy.Policy { return policy.Exponential(-1) }, false},
		{"Exponential(0)", func() policy.Policy { return policy.Exponential(0) }, false},
		{"Exponential(max)", func() policy.Policy { return policy.Exponential(maxDur) }, true},
		{"Constant(-1ns)", func() policy.Policy { return policy.Constant(-1) }, false},
		{"Constant(0): retry at once", func() policy.Policy { return policy.Constant(0) }, true},
		{"Constant(max)", func() policy.Policy { return policy.Constant(maxDur) }, true},
		{"Custom(nil)", func() policy.Policy { return policy.Custom(nil) }, false},
		{"Custom(negative delays): waited as zero", func() policy.Policy {
			return policy.Custom(backoff.ScheduleFunc(func(int) time.Duration { return math.MinInt64 }))
		}, true},
		{"WithFactor(NaN)", func() policy.Policy { return base.WithFactor(nan) }, false},
		{"WithFactor(+Inf)", func() policy.Policy { return base.WithFactor(inf) }, false},
		{"WithFactor(-Inf)", func() policy.Policy { return base.WithFactor(-inf) }, false},
		{"WithFactor(-1)", func() policy.Policy { return base.WithFactor(-1) }, false},
		{"WithFactor(0)", func() policy.Policy { return base.WithFactor(0) }, false},
		{"WithFactor(0.5)", func() policy.Policy { return base.WithFactor(0.5) }, false},
		{"WithFactor(1): constant growth", func() policy.Policy { return base.WithFactor(1) }, true},
		{"WithFactor(MaxFloat64): saturates", func() policy.Policy { return base.WithFactor(math.MaxFloat64) }, true},
		{"WithCap(-1ns)", func() policy.Policy { return base.WithCap(-1) }, false},
		{"WithCap(0): no cap", func() policy.Policy { return base.WithCap(0) }, true},
		{"WithCap(below base)", func() policy.Policy { return base.WithCap(time.Millisecond) }, false},
		{"WithCap(max)", func() policy.Policy { return base.WithCap(maxDur) }, true},
		{"WithMaxAttempts(MinInt)", func() policy.Policy { return base.WithMaxAttempts(math.MinInt) }, false},
		{"WithMaxAttempts(-1)", func() policy.Policy { return base.WithMaxAttempts(-1) }, false},
		{"WithMaxAttempts(0): no limit", func() policy.Policy { return base.WithMaxAttempts(0) }, true},
		{"WithMaxAttempts(MaxInt)", func() policy.Policy { return base.WithMaxAttempts(math.MaxInt) }, true},
		{"WithMaxElapsed(-1ns)", func() policy.Policy { return base.WithMaxElapsed(-1) }, false},
		{"WithMaxElapsed(0): no limit", func() policy.Policy { return base.WithMaxElapsed(0) }, true},
		{"WithMaxElapsed(max)", func() policy.Policy { return base.WithMaxElapsed(maxDur) }, true},
		{"WithAttemptTimeout(-1ns)", func() policy.Policy { return base.WithAttemptTimeout(-1) }, false},
		{"WithAttemptTimeout(0): none", func() policy.Policy { return base.WithAttemptTimeout(0) }, true},
		{"WithAttemptTimeout(max)", func() policy.Policy { return base.WithAttemptTimeout(maxDur) }, true},
		{"WithResetRule(stable -1ns)", func() policy.Policy { return base.WithResetRule(policy.ResetRule{AfterStableRun: -1}) }, false},
		{"WithResetRule(idle -1ns)", func() policy.Policy { return base.WithResetRule(policy.ResetRule{AfterIdle: -1}) }, false},
		{"WithResetRule(zero): never starts over", func() policy.Policy { return base.WithResetRule(policy.ResetRule{}) }, true},
		{"WithResetRule(max)", func() policy.Policy {
			return base.WithResetRule(policy.ResetRule{AfterStableRun: maxDur, AfterIdle: maxDur})
		}, true},
		{"WithJitter(unknown kind)", func() policy.Policy { return base.WithJitter(backoff.Jitter{Kind: 200}) }, false},
		{"WithJitter(proportional NaN)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Proportional, Fraction: nan})
		}, false},
		{"WithJitter(proportional +Inf)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Proportional, Fraction: inf})
		}, false},
		{"WithJitter(proportional -1)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Proportional, Fraction: -1})
		}, false},
		{"WithJitter(proportional MaxFloat64): saturates, stays under the cap", func() policy.Policy {
			return base.WithCap(time.Minute).WithJitter(backoff.Jitter{Kind: backoff.Proportional, Fraction: math.MaxFloat64})
		}, true},
		{"WithJitter(symmetric NaN)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: nan})
		}, false},
		{"WithJitter(symmetric 1.5)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: 1.5})
		}, false},
		{"WithJitter(symmetric 1)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: 1})
		}, true},
		{"WithJitter(full with a fraction)", func() policy.Policy {
			return base.WithJitter(backoff.Jitter{Kind: backoff.Full, Fraction: 0.1})
		}, false},
		{"WithClock(nil): the real clock", func() policy.Policy { return base.WithClock(nil) }, true},
		{"WithRetryIf(nil): retry every error", func() policy.Policy { return base.WithRetryIf(nil) }, true},
		{"WithRandom(nil): the default source", func() policy.Policy { return base.WithRandom(nil) }, true},
		{"WithGuard(nil): no guard", func() policy.Policy { return base.WithGuard(nil) }, true},
		{"WithGuard(capacity NaN)", func() policy.Policy { return base.WithGuard(policy.NewGuard(nan, 0.4)) }, false},
		{"WithGuard(capacity +Inf)", func() policy.Policy { return base.WithGuard(policy.NewGuard(inf, 0.4)) }, false},
		{"WithGuard(capacity 0)", func() policy.Policy { return base.WithGuard(policy.NewGuard(0, 0.4)) }, false},
		{"WithGuard(capacity huge)", func() policy.Policy { return base.WithGuard(policy.NewGuard(math.MaxFloat64, 1)) }, false},
		{"WithGuard(ratio -Inf)", func() policy.Policy { return base.WithGuard(policy.NewGuard(10, -inf)) }, false},
		{"WithGuard(ratio 0)", func() policy.Policy { return base.WithGuard(policy.NewGuard(10, 0)) }, false},
		{"WithGuard(ratio above capacity)", func() policy.Policy { return base.WithGuard(policy.NewGuard(10, 10.5)) }, false},
		{"WithGuard(largest)", func() policy.Policy {
			return base.WithGuard(policy.NewGuard(1_000_000, 1_000_000))
		}, true},
	}
	attempts := []int{math.MinInt, -1, 0, 1, 2, 63, 64, 1 << 40, math.MaxInt - 1, math.MaxInt}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p policy.Policy
			require.NotPanics(t, func() { p = tt.build() })
			err := p.Validate()
			if tt.valid {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, policy.ErrInvalid)
				require.True(t, errors.Is(err, policy.ErrInvalid) && len(err.Error()) > len("policy: invalid "), "the error says what is wrong: %v", err)
			}
			require.NotPanics(t, func() {
				_ = p.String()
				_, _ = p.MarshalText()
				var prev time.Duration
				for _, n := range attempts {
					d := p.Backoff(n, prev)
					require.GreaterOrEqual(t, d, time.Duration(0), "Backoff(%d)", n)
					if c := p.Cap(); c > 0 && err == nil {
						require.LessOrEqual(t, d, c, "Backoff(%d)", n)
					}
					prev = d
				}
			})
		})
	}
}
