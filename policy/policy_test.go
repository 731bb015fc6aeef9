package policy_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// The clocks of github.com/benbjohnson/clock fit policy.Clock as they are.
var (
	_ policy.Clock = clock.New()
	_ policy.Clock = clock.NewMock()
)

func TestDefault(t *testing.T) {
	p := policy.Default()
	require.NoError(t, p.Validate())
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i, w := range want {
		require.Equal(t, w*time.Second, p.Delay(i+1), "Delay(%d)", i+1)
	}
	require.Equal(t, 300*time.Second, p.Delay(math.MaxInt))
	require.Equal(t, 0, p.MaxAttempts())
	require.Equal(t, time.Duration(0), p.MaxElapsed())
	require.Nil(t, p.Clock())
	require.Equal(t, "exponential 10s x2 cap 5m0s", p.String())
}

// TestZeroPolicyIsInvalid: a Policy left unset, as a field a configuration
// file did not set, is an error naming what to do, not a policy that
// retries forever; so is every policy derived from it.
func TestZeroPolicyIsInvalid(t *testing.T) {
	var cfg struct {
		Name  string        `json:"name"`
		Retry policy.Policy `json:"retry"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"name": "payments"}`), &cfg), "the retry key is missing")
	for _, p := range []policy.Policy{cfg.Retry, {}, policy.Policy{}.WithMaxAttempts(3).WithCap(time.Second)} {
		err := p.Validate()
		require.ErrorIs(t, err, policy.ErrInvalid)
		require.ErrorContains(t, err, "start from Default, Exponential, Constant, Custom or Parse")
		require.Equal(t, "unset", p.String())
		_, err = p.MarshalText()
		require.ErrorIs(t, err, policy.ErrInvalid)
	}
	var zero policy.Policy
	require.Zero(t, zero.Backoff(3, 0), "the zero Policy's waits are 0")
	require.Equal(t, 5*time.Minute, zero.MaxHint(), "the getters give what each setting's doc calls its default")
	require.Equal(t, policy.ResetRule{OnSuccess: true}, zero.ResetRule())
	require.NoError(t, policy.Default().Validate())
}

func TestDelay(t *testing.T) {
	tests := []struct {
		name string
		p    policy.Policy
		want []time.Duration // for attempts 1, 2, 3, …
	}{
		{"exponential", policy.Exponential(time.Second), []time.Duration{1e9, 2e9, 4e9, 8e9}},
		{"factor 3 with cap", policy.Exponential(time.Second).WithFactor(3).WithCap(10 * time.Second), []time.Duration{1e9, 3e9, 9e9, 10e9, 10e9}},
		{"factor 1", policy.Exponential(time.Second).WithFactor(1), []time.Duration{1e9, 1e9, 1e9}},
		{"constant", policy.Constant(time.Second), []time.Duration{1e9, 1e9}},
		{"constant zero", policy.Constant(0), []time.Duration{0, 0}},
		{"custom", policy.Custom(backoff.ScheduleFunc(func(n int) time.Duration { return time.Duration(n) * time.Second })).WithCap(2 * time.Second), []time.Duration{1e9, 2e9, 2e9}},
		{"custom negative clamped", policy.Custom(backoff.ScheduleFunc(func(int) time.Duration { return -1 })), []time.Duration{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.p.Validate())
			for i, w := range tt.want {
				require.Equal(t, w, tt.p.Delay(i+1), "Delay(%d)", i+1)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name    string
		p       policy.Policy
		mention string // the error must name this
	}{
		{"zero exponential base", policy.Exponential(0), "base"},
		{"negative exponential base", policy.Exponential(-time.Second), "base"},
		{"negative constant", policy.Constant(-1), "delay"},
		{"nil custom schedule", policy.Custom(nil), "schedule"},
		{"typed nil ScheduleFunc", policy.Custom(backoff.ScheduleFunc(nil)), "schedule"},
		{"typed nil pointer schedule", policy.Custom((*ptrSchedule)(nil)), "schedule"},
		{"zero max hint", policy.Default().WithMaxHint(0), "max-hint"},
		{"negative max hint", policy.Default().WithMaxHint(-time.Second), "max-hint"},
		{"factor below 1", policy.Default().WithFactor(0.5), "factor"},
		{"zero factor", policy.Default().WithFactor(0), "factor"},
		{"negative factor", policy.Default().WithFactor(-2), "factor"},
		{"NaN factor", policy.Default().WithFactor(nan), "factor"},
		{"infinite factor", policy.Default().WithFactor(inf), "factor"},
		{"factor on a constant", policy.Constant(time.Second).WithFactor(2), "factor"},
		{"factor on a custom", policy.Custom(backoff.Constant(1)).WithFactor(2), "factor"},
		{"negative cap", policy.Default().WithCap(-time.Second), "cap"},
		{"cap below base", policy.Exponential(10 * time.Second).WithCap(time.Second), "cap"},
		{"cap below constant", policy.Constant(10 * time.Second).WithCap(time.Second), "cap"},
		{"negative attempts", policy.Default().WithMaxAttempts(-1), "attempts"},
		{"min int attempts", policy.Default().WithMaxAttempts(math.MinInt), "attempts"},
		{"negative elapsed", policy.Default().WithMaxElapsed(-time.Second), "elapsed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.Contains(t, err.Error(), "policy: invalid "+tt.mention)
		})
	}
}

func TestValidateReportsEveryFault(t *testing.T) {
	err := policy.Exponential(-1).WithFactor(0).WithMaxAttempts(-1).Validate()
	require.ErrorIs(t, err, policy.ErrInvalid)
	for _, s := range []string{"base", "factor", "attempts"} {
		require.Contains(t, err.Error(), "invalid "+s)
	}
}

func TestValidZeroMeaningsAreValid(t *testing.T) {
	p := policy.Default().WithCap(0).WithMaxAttempts(0).WithMaxElapsed(0).WithClock(nil).WithRetryIf(nil)
	require.NoError(t, p.Validate())
	require.Equal(t, 10*time.Second<<8, p.Delay(9), "WithCap(0) removes the cap")
}

// Each getter reads back what the With… method of its name set, and the
// default's for the default Policy.
func TestGettersReadBackTheirWithMethods(t *testing.T) {
	zero := policy.Default()
	require.Equal(t, 0, zero.MaxAttempts())
	require.Zero(t, zero.MaxElapsed())
	require.Zero(t, zero.AttemptTimeout())
	require.Equal(t, policy.DefaultMaxHint, zero.MaxHint())
	require.Nil(t, zero.Clock())
	require.Nil(t, zero.Guard())
	require.Equal(t, policy.Hedging{}, zero.Hedging())
	require.Equal(t, policy.ResetOnSuccess, zero.ResetRule())

	mock, g := clock.NewMock(), policy.NewGuard(10, 1)
	rule := policy.ResetRule{AfterIdle: time.Minute}
	h := policy.Hedging{Quantile: 0.95, MaxInFlight: 3}
	p := policy.Constant(time.Second).WithMaxAttempts(4).WithMaxElapsed(time.Hour).WithAttemptTimeout(time.Minute).
		WithMaxHint(time.Second).WithClock(mock).WithGuard(g).WithHedging(h).WithResetRule(rule)
	require.NoError(t, p.Validate())
	require.Equal(t, 4, p.MaxAttempts())
	require.Equal(t, time.Hour, p.MaxElapsed())
	require.Equal(t, time.Minute, p.AttemptTimeout())
	require.Equal(t, time.Second, p.MaxHint())
	require.Same(t, mock, p.Clock())
	require.Same(t, g, p.Guard())
	require.Equal(t, h, p.Hedging())
	require.Equal(t, rule, p.ResetRule())
	require.Equal(t, policy.Hedging{}, p.WithHedging(policy.Hedging{}).Hedging(), "hedging removed")
}

func TestWithNeverChangesTheReceiver(t *testing.T) {
	mock := clock.NewMock()
	base := policy.Exponential(time.Second).WithCap(time.Minute).WithMaxAttempts(3)
	before := base.String()
	derived := []policy.Policy{
		base.WithFactor(3),
		base.WithCap(time.Hour),
		base.WithMaxAttempts(9),
		base.WithMaxElapsed(time.Hour),
		base.WithClock(mock),
		base.WithRetryIf(func(error) bool { return false }),
		base.WithCap(-1),
	}
	require.Equal(t, before, base.String())
	require.NoError(t, base.Validate())
	require.Nil(t, base.Clock())
	require.True(t, base.Retryable(errors.New("x")))
	require.Equal(t, 4*time.Second, base.Delay(3))
	require.Equal(t, 9*time.Second, derived[0].Delay(3))
	require.Equal(t, "exponential 1s x2 cap 1h0m0s attempts 3", derived[1].String())
	require.Equal(t, 9, derived[2].MaxAttempts())
	require.Equal(t, time.Hour, derived[3].MaxElapsed())
	require.Same(t, mock, derived[4].Clock())
	require.False(t, derived[5].Retryable(errors.New("x")))
	require.Error(t, derived[6].Validate())

	// The zero value too: deriving from it leaves it as it was.
	var zero policy.Policy
	_ = zero.WithMaxAttempts(2)
	require.Equal(t, 0, zero.MaxAttempts())
}

func TestString(t *testing.T) {
	tests := []struct {
		p    policy.Policy
		want string
	}{
		{policy.Exponential(100 * time.Millisecond).WithFactor(1.6).WithCap(2 * time.Minute), "exponential 100ms x1.6 cap 2m0s"},
		{policy.Constant(time.Second).WithMaxAttempts(5).WithMaxElapsed(time.Minute), "constant 1s attempts 5 elapsed 1m0s"},
		{policy.Constant(0), "constant 0s"},
		{policy.Custom(backoff.Constant(1)).WithCap(time.Second), "custom cap 1s"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.p.String())
	}
}

func TestRetryable(t *testing.T) {
	errTemp := errors.New("temporary")
	p := policy.Default().WithRetryIf(func(err error) bool { return errors.Is(err, errTemp) })
	require.True(t, p.Retryable(errTemp))
	require.False(t, p.Retryable(errors.New("other")))
	require.True(t, policy.Default().Retryable(errors.New("other")), "everything is retried by default")
}

type ptrSchedule struct{ d time.Duration }

func (s *ptrSchedule) Delay(int) time.Duration { return s.d }

func TestTypedNilScheduleNeverPanics(t *testing.T) {
	for _, s := range []backoff.Schedule{backoff.ScheduleFunc(nil), (*ptrSchedule)(nil)} {
		p := policy.Custom(s)
		require.ErrorIs(t, p.Validate(), policy.ErrInvalid)
		require.NotPanics(t, func() {
			require.Zero(t, p.Delay(3))
			require.Zero(t, p.Backoff(3, time.Second))
		})
	}
	require.NoError(t, policy.Custom(&ptrSchedule{d: time.Second}).Validate())
	require.Equal(t, time.Second, policy.Custom(&ptrSchedule{d: time.Second}).Delay(4))
}

// A typed nil clock is no clock to read: the policy is invalid, where nil
// itself means the real clock.
func TestTypedNilClockIsInvalid(t *testing.T) {
	require.NoError(t, policy.Default().WithClock(nil).Validate())
	err := policy.Default().WithClock((*clock.Mock)(nil)).Validate()
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, "clock")
}

// TestConstructorsHaveNoJitter: every constructor's doc says it has no
// jitter, and the same attempt's delay is the same on every draw.
func TestConstructorsHaveNoJitter(t *testing.T) {
	for name, p := range map[string]policy.Policy{
		"Default":     policy.Default(),
		"Exponential": policy.Exponential(time.Second),
		"Constant":    policy.Constant(time.Second),
		"Custom":      policy.Custom(backoff.Constant(time.Second)),
	} {
		require.Equal(t, backoff.Jitter{}, p.Jitter(), name)
		for range 20 {
			require.Equal(t, p.Backoff(3, 0), p.Backoff(3, 0), name)
		}
	}
}
