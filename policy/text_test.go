package policy_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

var roundTrips = []policy.Policy{
	policy.Default(),
	policy.Exponential(100 * time.Millisecond),
	policy.Exponential(time.Second).WithFactor(1.6).WithCap(2 * time.Minute),
	policy.Exponential(time.Second).WithFactor(1),
	policy.Constant(0),
	policy.Constant(250 * time.Millisecond).WithMaxAttempts(5).WithMaxElapsed(time.Minute),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Full}),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Equal}),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Decorrelated}),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Proportional, Fraction: 0.5}),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Proportional}),
	policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Symmetric, Fraction: 0.2}),
	policy.Default().WithAttemptTimeout(3 * time.Second),
	policy.Default().WithResetRule(policy.ResetRule{AfterStableRun: 10 * time.Minute}),
	policy.Default().WithResetRule(policy.ResetRule{OnSuccess: true, AfterIdle: 600 * time.Second}),
	policy.Default().WithResetRule(policy.ResetRule{OnSuccess: true, AfterStableRun: time.Minute, AfterIdle: time.Hour}),
	policy.Default().WithResetRule(policy.ResetRule{}),
	policy.Default().WithMaxHint(time.Hour),
	policy.Constant(time.Second).WithMaxHint(time.Nanosecond).WithMaxAttempts(3),
	policy.Exponential(time.Nanosecond).WithFactor(1e300).WithCap(time.Duration(1<<63 - 1)).WithMaxAttempts(1 << 62),
}

func TestTextRoundTrip(t *testing.T) {
	for _, p := range roundTrips {
		t.Run(p.String(), func(t *testing.T) {
			text, err := p.MarshalText()
			require.NoError(t, err)
			q, err := policy.Parse(string(text))
			require.NoError(t, err)
			requireSamePolicy(t, p, q)
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, p := range roundTrips {
		data, err := json.Marshal(p)
		require.NoError(t, err)
		var q policy.Policy
		require.NoError(t, json.Unmarshal(data, &q), "%s", data)
		requireSamePolicy(t, p, q)
	}
}

func TestJSONInAConfigStruct(t *testing.T) {
	var cfg struct {
		Fetch policy.Policy `json:"fetch"`
		Push  policy.Policy `json:"push"`
	}
	err := json.Unmarshal([]byte(`{
		"fetch": "exponential 100ms x2 cap 5s attempts 5 jitter full",
		"push": {"schedule": "exponential", "base": "1s", "factor": 1.6, "cap": "2m",
		         "jitter": "symmetric", "jitter_fraction": 0.2, "attempt_timeout": "3s",
		         "reset": {"stable": "10m"}}
	}`), &cfg)
	require.NoError(t, err)
	require.Equal(t, "exponential 100ms x2 cap 5s attempts 5 jitter full", cfg.Fetch.String())
	require.Equal(t, "exponential 1s x1.6 cap 2m0s jitter symmetric 0.2 attempt-timeout 3s reset stable 10m0s", cfg.Push.String())

	var p policy.Policy
	err = json.Unmarshal([]byte(`{"attempts": 3}`), &p)
	require.ErrorIs(t, err, policy.ErrInvalid, "an object names its schedule, as the text form does")
	require.ErrorContains(t, err, `"schedule" is missing: give "default"`)
	require.NoError(t, json.Unmarshal([]byte(`{"schedule": "default", "attempts": 3}`), &p))
	require.Equal(t, "exponential 10s x2 cap 5m0s attempts 3", p.String())
}

func TestJSONRejects(t *testing.T) {
	for _, in := range []string{
		`{"schedule": "exponential", "base": "1s", "cap": "1ms"}`,
		`{"schedule": "exponential", "base": "1s", "cpa": "1m"}`,
		`{"base": "1s"}`,
		`{"jitter_fraction": 0.5}`,
		`{"attempts": "five"}`,
		`42`,
		`"exponential"`,
		`{"schedule": "custom"}`,
	} {
		p := policy.Constant(time.Second)
		err := json.Unmarshal([]byte(in), &p)
		require.ErrorIs(t, err, policy.ErrInvalid, in)
		require.Equal(t, "constant 1s", p.String(), "%s: a failed parse leaves the policy as it was", in)
	}
	// Each setting once, as in the text form: encoding/json alone would
	// keep the last of two.
	for in, key := range map[string]string{
		`{"schedule": "constant", "base": "1s", "attempts": 3, "attempts": 5}`:                        "attempts",
		`{"schedule": "constant", "base": "1s", "reset": {"idle": "1m", "idle": "2m"}}`:               "idle",
		`{"schedule": "constant", "base": "1s", "reset": {"idle": "1m"}, "reset": {"success": true}}`: "reset",
		`{"schedule": "constant", "base": "1s", "attempts": 3, "ATTEMPTS": 5}`:                        "attempts",
		`{"schedule": "constant", "base": "1s", "reset": {"success": true, "Success": false}}`:        "success",
		`{"schedule": "constant", "base": "1s", "reset": {"success": true}, "RESET": {"idle": "1m"}}`: "reset",
	} {
		p := policy.Constant(time.Second)
		err := json.Unmarshal([]byte(in), &p)
		require.ErrorIs(t, err, policy.ErrInvalid, in)
		require.ErrorContains(t, err, fmt.Sprintf("%q given twice", key), in)
		require.Equal(t, "constant 1s", p.String(), in)
	}
	// A JSON setting is named in JSON's words, not in the text form's.
	for _, in := range []string{
		`{"schedule": "constant", "base": "1s", "factor": 2}`,
		`{"schedule": "default", "factor": 1.6}`,
	} {
		var p policy.Policy
		err := json.Unmarshal([]byte(in), &p)
		require.ErrorIs(t, err, policy.ErrInvalid, in)
		require.ErrorContains(t, err, `"factor" needs "schedule": "exponential"`, in)
	}
}

// A JSON error names the JSON field at fault in JSON's words, and never a
// Go type.
func TestJSONErrorMessages(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"retry": 42}`, `policy: JSON: unknown field "retry"; the fields are schedule, base, factor,`},
		{`{"attempts": "five"}`, `policy: JSON: "attempts" takes a number, not a JSON string`},
		{`{"reset": {"stable": 5}}`, `policy: JSON: "reset.stable" takes a string, not a JSON number`},
		{`[1]`, `policy: JSON: a policy is a JSON object or string, not a JSON array`},
		{`{"schedule": "constant", "base": "1s", "factor": 2}`, `policy: JSON: "factor" needs "schedule": "exponential"; only an exponential schedule grows`},
		{`{"schedule": "exponential"}`, `policy: JSON: "schedule": "exponential" needs "base", a duration such as "100ms"`},
		{`{"schedule": "custom", "base": "1s"}`, `policy: JSON: "schedule": "custom" is not one of "default", "exponential" and "constant"`},
		{`{"schedule": "exponential", "base": "500ms", "cap": "100ms", "attempts": -1, "attempt_timeout": "-50ms"}`,
			`policy: JSON: "cap": 100ms is below the base delay 500ms; "attempts": -1 is negative (attempts count the first call; 0 means no limit); "attempt_timeout": -50ms is negative (0 means none)`},
		{`{"schedule": "constant", "base": "-1s"}`, `policy: JSON: "base": -1s is negative`},
		{`{"schedule": "exponential", "base": "5"}`, `policy: JSON: "base": "5" is not a duration such as "5s"`},
		{`{"attempt_timeout": "5"}`, `policy: JSON: "attempt_timeout": "5" is not a duration such as "5s"`},
		{`{"schedule": "default", "max_hint": "0s"}`, `policy: JSON: "max_hint": 0s is not positive`},
		{`{"attempts": 3}`, `policy: JSON: "schedule" is missing: give "default" for the kubelet back-off, or "exponential" or "constant" with a "base"`},
		{`{"schedule": "default", "base": "1s"}`, `policy: JSON: "base" given with "schedule": "default", whose base is 10s: use "exponential" for another base`},
		{`{"reset": {"idle": "soon"}}`, `policy: JSON: "reset.idle": "soon" is not a duration such as "5s"`},
		{`{"schedule": "default", "jitter": "fuul"}`, `policy: JSON: "jitter": "fuul" is not one of none, full,`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var p policy.Policy
			err := json.Unmarshal([]byte(tt.in), &p)
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "struct", "UnmarshalJSON(%s) = %v, want no Go type in it", tt.in, err)
			require.NotContains(t, err.Error(), "given without", "UnmarshalJSON(%s) = %v", tt.in, err)
			require.NotContains(t, err.Error(), "parse", "UnmarshalJSON(%s) = %v, want no text form in it", tt.in, err)
		})
	}
}

// Text that parses into an invalid policy says "policy:" once, then each
// invalid setting.
func TestParseInvalidSettingsSaysPolicyOnce(t *testing.T) {
	_, err := policy.Parse("exponential 100ms x0.5")
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.EqualError(t, err, `policy: parse "exponential 100ms x0.5": invalid factor: 0.5 is not a finite number ≥ 1`)

	_, err = policy.Parse("exponential 1s cap -1s attempts -1")
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.Equal(t, 1, strings.Count(err.Error(), "policy:"), "Parse() = %v, want one \"policy:\"", err)
	require.ErrorContains(t, err, "invalid cap: -1s is negative")
	require.ErrorContains(t, err, "; invalid attempts: -1 is negative")
}

func TestFlagValue(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := policy.Default()
	fs.TextVar(&p, "retry", p, "retry policy")
	require.Equal(t, "exponential 10s x2 cap 5m0s", fs.Lookup("retry").DefValue)
	require.NoError(t, fs.Parse([]string{"-retry", "constant 2s attempts 4"}))
	require.Equal(t, "constant 2s attempts 4", p.String())
	require.Error(t, fs.Parse([]string{"-retry", "constant"}))
	require.Equal(t, "constant 2s attempts 4", p.String())
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, quote string }{
		{"", `write "default"`},
		{"   ", `write "default"`},
		{"expo 1s", `bad word "expo", expected a schedule`},
		{"exponential", "unexpected end, expected a duration"},
		{"exponential fast", `bad word "fast", expected a duration`},
		{"exponential 10", `bad word "10", expected a duration`},
		{"exponential 1s xtwo", `bad word "xtwo", expected a factor`},
		{"exponential 1s x", `bad word "x", expected a factor`},
		{"exponential 1s x 2", `bad word "x", expected a factor such as x2 or x1.6`},
		{"exponential 1s x0.5", "invalid factor"},
		{"exponential 1s xNaN", "invalid factor"},
		{"exponential 1s x+Inf", "invalid factor"},
		{"exponential 0s", "invalid base"},
		{"exponential -1s", "invalid base"},
		{"constant -1s", "invalid delay"},
		{"constant 1s x2", `bad word "x2", expected a setting`},
		{"custom", `bad word "custom"`},
		{"default cap", "unexpected end, expected a duration"},
		{"default cap 1s", "invalid cap: 1s is below the base delay 10s"},
		{"default cap -5m", "invalid cap"},
		{"default cap 5m cap 6m", `bad word "cap", expected each setting once`},
		{"default attempts", "unexpected end, expected a whole number"},
		{"default attempts 2.5", `bad word "2.5", expected a whole number`},
		{"default attempts -1", "invalid attempts"},
		{"default attempts 99999999999999999999", `bad word "99999999999999999999"`},
		{"default elapsed forever", `bad word "forever", expected a duration`},
		{"default jitter", "unexpected end, expected a jitter kind"},
		{"default jitter fuul", `bad word "fuul", expected a jitter kind`},
		{"default jitter full 0.5", "invalid jitter: full jitter takes no fraction"},
		{"default jitter symmetric 2", "invalid jitter: symmetric fraction 2"},
		{"default jitter proportional -1", "invalid jitter"},
		{"default attempt-timeout -1s", "invalid attempt-timeout"},
		{"default reset", "unexpected end, expected a reset rule"},
		{"default reset always", `bad word "always", expected a reset rule`},
		{"default reset stable", "unexpected end, expected a duration"},
		{"default reset success none", `bad word "none"`},
		{"default reset success success", "each reset rule once"},
		{"default reset stable -1m", "invalid reset"},
		{"default retry 5", `bad word "retry", expected a setting`},
		{"default 5s", `bad word "5s", expected a setting`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := policy.Parse(tt.in)
			require.ErrorIs(t, err, policy.ErrInvalid)
			require.Contains(t, err.Error(), tt.quote)
			require.Equal(t, policy.Policy{}, p, "no half-parsed policy")
		})
	}
}

// The text form names every jitter kind, and the zero kind is "none":
// String spells each name, Parse reads it back, and errors name the kind.
func TestJitterKindNames(t *testing.T) {
	for name, kind := range map[string]backoff.JitterKind{
		"none": 0, "full": backoff.Full, "equal": backoff.Equal, "decorrelated": backoff.Decorrelated,
		"proportional": backoff.Proportional, "symmetric": backoff.Symmetric,
	} {
		p, err := policy.Parse("default jitter " + name)
		require.NoError(t, err, name)
		require.Equal(t, backoff.Jitter{Kind: kind}, p.Jitter(), name)
		require.Equal(t, name, policy.JitterName(kind))
		q := policy.Default().WithJitter(backoff.Jitter{Kind: kind, Fraction: 0.5})
		if kind == backoff.Proportional || kind == backoff.Symmetric {
			require.Contains(t, q.String(), " jitter "+name+" 0.5")
			continue
		}
		require.Contains(t, q.String(), " jitter "+name+" 0.5", "a fraction the kind does not take is still shown")
		require.ErrorContains(t, q.Validate(), "invalid jitter: "+name+" jitter takes no fraction")
	}
	require.Equal(t, "exponential 10s x2 cap 5m0s", policy.Default().WithJitter(backoff.Jitter{}).String(), "no jitter is not spelled out")
	bad := policy.Default().WithJitter(backoff.Jitter{Kind: 9})
	require.ErrorContains(t, bad.Validate(), "invalid jitter: unknown kind 9")
	require.Contains(t, bad.String(), " jitter jitter(9)")
}

func TestMarshalRejects(t *testing.T) {
	_, err := policy.Custom(backoff.Constant(1)).MarshalText()
	require.ErrorIs(t, err, policy.ErrInvalid)
	_, err = policy.Constant(-1).MarshalText()
	require.ErrorIs(t, err, policy.ErrInvalid)
	_, err = json.Marshal(policy.Constant(-1))
	require.Error(t, err)
}

func TestParseAcceptsTheMultiplicationSign(t *testing.T) {
	p, err := policy.Parse("exponential 10s ×2 cap 5m0s")
	require.NoError(t, err)
	requireSamePolicy(t, policy.Default(), p)
}

// requireSamePolicy compares two policies by their text and the delays
// they give.
func requireSamePolicy(t *testing.T, want, got policy.Policy) {
	t.Helper()
	require.Equal(t, want.String(), got.String())
	require.Equal(t, want.MaxAttempts(), got.MaxAttempts())
	require.Equal(t, want.MaxElapsed(), got.MaxElapsed())
	require.Equal(t, want.Cap(), got.Cap())
	require.Equal(t, want.Jitter(), got.Jitter())
	require.Equal(t, want.AttemptTimeout(), got.AttemptTimeout())
	require.Equal(t, want.ResetRule(), got.ResetRule())
	require.Equal(t, want.MaxHint(), got.MaxHint())
	for _, n := range []int{1, 2, 3, 10, 64, 1 << 40} {
		require.Equal(t, want.Delay(n), got.Delay(n), "Delay(%d)", n)
	}
}

func TestMaxHintForms(t *testing.T) {
	p, err := policy.Parse("default max-hint 10m")
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, p.MaxHint())
	require.Equal(t, "exponential 10s x2 cap 5m0s max-hint 10m0s", p.String())
	require.Equal(t, policy.DefaultMaxHint, policy.Default().MaxHint())
	require.NotContains(t, policy.Default().String(), "max-hint", "the default is not spelled out")

	var q policy.Policy
	require.NoError(t, json.Unmarshal([]byte(`{"schedule": "constant", "base": "1s", "max_hint": "2m"}`), &q))
	require.Equal(t, 2*time.Minute, q.MaxHint())

	for _, bad := range []string{"default max-hint 0s", "default max-hint -1s", "default max-hint soon", "default max-hint"} {
		_, err := policy.Parse(bad)
		require.ErrorIs(t, err, policy.ErrInvalid, bad)
	}
	require.ErrorIs(t, policy.Default().WithMaxHint(0).Validate(), policy.ErrInvalid)
	require.ErrorContains(t, policy.Default().WithMaxHint(-time.Second).Validate(), "max-hint")
}

func TestJSONNullLeavesThePolicyAlone(t *testing.T) {
	cfg := struct {
		Retry policy.Policy `json:"retry"`
	}{Retry: policy.Constant(time.Second).WithMaxAttempts(3)}
	require.NoError(t, json.Unmarshal([]byte(`{"retry": null}`), &cfg))
	require.Equal(t, "constant 1s attempts 3", cfg.Retry.String())
	p := policy.Constant(time.Second)
	require.NoError(t, p.UnmarshalJSON([]byte(" null ")))
	require.Equal(t, "constant 1s", p.String())
}

// Text replaces the whole policy: the settings it has no words for are
// those of the text's policy, none.
func TestUnmarshalTextReplacesSettingsWithoutWords(t *testing.T) {
	p := policy.Default().WithGuard(policy.NewGuard(10, 1)).WithHedging(policy.Hedging{Delay: time.Second})
	require.NoError(t, p.UnmarshalText([]byte("constant 1s attempts 3")))
	require.Nil(t, p.Guard())
	require.Equal(t, policy.Hedging{}, p.Hedging())
	require.Equal(t, 3, p.MaxAttempts())
}

// An empty configuration is a mistake more often than a wish for the
// default policy, which has no attempt or time limit: it is refused, and the
// error says how to ask for the default.
func TestEmptyConfigurationIsRefused(t *testing.T) {
	for _, in := range []string{`{}`, ` { } `, `""`, `"  "`} {
		p := policy.Constant(time.Second)
		err := p.UnmarshalJSON([]byte(in))
		require.ErrorIs(t, err, policy.ErrInvalid, "UnmarshalJSON(%s)", in)
		require.ErrorContains(t, err, `write "default"`, "UnmarshalJSON(%s)", in)
		require.Equal(t, "constant 1s", p.String(), "UnmarshalJSON(%s) changed the policy", in)
	}
	for _, in := range []string{"", " \t\n"} {
		p := policy.Constant(time.Second)
		err := p.UnmarshalText([]byte(in))
		require.ErrorIs(t, err, policy.ErrInvalid, "UnmarshalText(%q)", in)
		require.ErrorContains(t, err, `write "default"`, "UnmarshalText(%q)", in)
		require.Equal(t, "constant 1s", p.String())
	}
	var p policy.Policy
	require.NoError(t, json.Unmarshal([]byte(`{"schedule": "default"}`), &p))
	require.NoError(t, p.UnmarshalText([]byte("default")))
	require.Equal(t, policy.Default().String(), p.String())
}
