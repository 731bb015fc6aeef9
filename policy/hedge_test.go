//go:build go1.25

package policy_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
)

func TestHedgeValidation(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    policy.Hedging
		ok   bool
	}{
		{"zero: no hedging", policy.Hedging{}, true},
		{"fixed", policy.Hedging{Delay: time.Millisecond}, true},
		{"adaptive", policy.Hedging{Quantile: 0.95}, true},
		{"adaptive after a fixed warm-up", policy.Hedging{Delay: time.Millisecond, Quantile: 0.95, MaxInFlight: 3}, true},
		{"the p99", policy.Hedging{Quantile: 0.99}, true},
		{"a low quantile", policy.Hedging{Quantile: 0.01}, true},
		{"most in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: policy.MaxHedgeInFlight}, true},
		{"negative delay", policy.Hedging{Delay: -time.Millisecond}, false},
		{"nothing says when", policy.Hedging{MaxInFlight: 3}, false},
		{"one in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: 1}, false},
		{"too many in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: policy.MaxHedgeInFlight + 1}, false},
		{"negative in flight", policy.Hedging{Delay: time.Millisecond, MaxInFlight: -2}, false},
		{"quantile above 0.99", policy.Hedging{Quantile: 0.995}, false},
		{"quantile 1", policy.Hedging{Quantile: 1}, false},
		{"negative quantile", policy.Hedging{Quantile: -0.5}, false},
		{"quantile NaN", policy.Hedging{Quantile: math.NaN()}, false},
		{"quantile +Inf", policy.Hedging{Quantile: math.Inf(1)}, false},
		{"quantile NaN beside a delay", policy.Hedging{Delay: time.Millisecond, Quantile: math.NaN()}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A guard, as hedging after a quantile needs one (retry.Hedge
			// refuses it without); Validate judges the settings alone.
			p := policy.Default().WithGuard(policy.NewGuard(10, 1)).WithHedging(tt.h)
			err := p.Validate()
			if tt.ok {
				require.NoError(t, err)
				require.NoError(t, p.WithGuard(nil).Validate(), "Validate does not ask for the guard")
				require.Equal(t, tt.h, p.Hedging())
				return
			}
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, "hedge")
		})
	}
}
