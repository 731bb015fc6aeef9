package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

var (
	_ interface {
		MarshalText() ([]byte, error)
		String() string
	} = Policy{}
	_ interface {
		UnmarshalText([]byte) error
		UnmarshalJSON([]byte) error
	} = (*Policy)(nil)
)

// Parse reads a policy from its text form (see [Policy.UnmarshalText]).
func Parse(s string) (Policy, error) {
	var p Policy
	err := p.UnmarshalText([]byte(s))
	return p, err
}

// MarshalText returns the policy's text form, String. Settings that have no
// text form (a clock, a retry predicate, a random source, a guard,
// hedging) are left out: they are wiring, not configuration. A custom
// schedule cannot be written and is an error, and so is an invalid policy.
//
// With [Policy.UnmarshalText] it makes a Policy a configuration value as the
// standard library understands one: encoding/json writes it as a string
// holding its text form, and flag.TextVar reads it from the command line:
//
//	p := policy.Default()
//	flag.TextVar(&p, "retry", p, "retry policy, e.g. \"exponential 100ms x2 cap 5s attempts 5\"")
func (p Policy) MarshalText() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.cfg().kind == custom {
		return nil, fmt.Errorf("policy: a custom schedule has no text form: %w", ErrInvalid)
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads a policy from its text form, for example
// "exponential 100ms x2 cap 5s attempts 5 jitter full". The grammar:
//
//	policy    = schedule { setting }
//	schedule  = "default" | "exponential" DURATION [ "x"FACTOR ] | "constant" DURATION
//	setting   = "cap" DURATION | "attempts" INT | "elapsed" DURATION
//	          | "jitter" KIND [ FRACTION ] | "attempt-timeout" DURATION
//	          | "max-hint" DURATION
//	          | "reset" ( "none" | { "success" | "stable" DURATION | "idle" DURATION } )
//
// Words are separated by spaces, DURATION is what time.ParseDuration reads
// and KIND one of none, full, equal, decorrelated, proportional, symmetric.
// The factor is one word with its "x", as in x1.6 ("×" may stand for the
// "x"); an exponential schedule without one doubles.
// "default" is [Default] and the settings after it change it; each setting
// may appear once.
//
// Malformed text is an error matching [ErrInvalid] that quotes the bad word
// and says what was expected, and so is text that parses into a policy
// Validate rejects. On error *p is left as it was: there is no half-parsed
// policy.
func (p *Policy) UnmarshalText(text []byte) error {
	q, err := parse(string(text))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// UnmarshalJSON reads a policy from a JSON string holding its text form, or
// from an object whose fields spell the same settings:
//
//	{"schedule": "exponential", "base": "100ms", "factor": 2, "cap": "5s",
//	 "attempts": 5, "elapsed": "1m", "jitter": "proportional",
//	 "jitter_fraction": 0.5, "attempt_timeout": "2s", "max_hint": "10m",
//	 "reset": {"success": true, "stable": "10m", "idle": "10m"}}
//
// Unknown fields are errors, and so is a field given twice (encoding/json
// alone would keep the last); an absent "reset" is the default reset rule.
// A JSON null leaves p as it was, as encoding/json does for other types.
func (p *Policy) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("policy: %v: %w", err, ErrInvalid)
		}
		return p.UnmarshalText([]byte(s))
	}
	var obj struct {
		Schedule       string   `json:"schedule"`
		Base           string   `json:"base"`
		Factor         *float64 `json:"factor"`
		Cap            string   `json:"cap"`
		Attempts       int      `json:"attempts"`
		Elapsed        string   `json:"elapsed"`
		Jitter         string   `json:"jitter"`
		JitterFraction *float64 `json:"jitter_fraction"`
		AttemptTimeout string   `json:"attempt_timeout"`
		MaxHint        string   `json:"max_hint"`
		Reset          *struct {
			Success bool   `json:"success"`
			Stable  string `json:"stable"`
			Idle    string `json:"idle"`
		} `json:"reset"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("policy: JSON: %v: %w", err, ErrInvalid)
	}
	if key, ok := repeatedKey(json.NewDecoder(bytes.NewReader(data))); ok {
		return fmt.Errorf("policy: JSON: %q given twice; each setting may appear once: %w", key, ErrInvalid)
	}
	// Spell the object as text, so that both forms share one parser and one
	// set of checks.
	var words []string
	add := func(ws ...string) { words = append(words, ws...) }
	switch obj.Schedule {
	case "default", "":
		if obj.Base != "" {
			return fmt.Errorf("policy: JSON: \"base\" given without \"schedule\": %w", ErrInvalid)
		}
		add("default")
	default:
		add(obj.Schedule, obj.Base)
	}
	if obj.Factor != nil {
		if obj.Schedule != "exponential" {
			return fmt.Errorf("policy: JSON: \"factor\" given without \"schedule\": \"exponential\"; only an exponential schedule grows: %w", ErrInvalid)
		}
		add("x" + formatFloat(*obj.Factor))
	}
	if obj.Cap != "" {
		add("cap", obj.Cap)
	}
	if obj.Attempts != 0 {
		add("attempts", strconv.Itoa(obj.Attempts))
	}
	if obj.Elapsed != "" {
		add("elapsed", obj.Elapsed)
	}
	if obj.Jitter != "" {
		add("jitter", obj.Jitter)
	}
	if obj.JitterFraction != nil {
		if obj.Jitter == "" {
			return fmt.Errorf("policy: JSON: \"jitter_fraction\" given without \"jitter\": %w", ErrInvalid)
		}
		add(formatFloat(*obj.JitterFraction))
	}
	if obj.AttemptTimeout != "" {
		add("attempt-timeout", obj.AttemptTimeout)
	}
	if obj.MaxHint != "" {
		add("max-hint", obj.MaxHint)
	}
	if r := obj.Reset; r != nil {
		add("reset")
		if !r.Success && r.Stable == "" && r.Idle == "" {
			add("none")
		}
		if r.Success {
			add("success")
		}
		if r.Stable != "" {
			add("stable", r.Stable)
		}
		if r.Idle != "" {
			add("idle", r.Idle)
		}
	}
	q, err := parseWords(words, strings.Join(words, " "))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// parseError says where the text went wrong.
type parseError struct {
	text   string
	word   string // "" at the end of the text
	expect string
}

func (e *parseError) Error() string {
	if e.word == "" {
		return fmt.Sprintf("policy: parse %q: unexpected end, expected %s", e.text, e.expect)
	}
	return fmt.Sprintf("policy: parse %q: bad word %q, expected %s", e.text, e.word, e.expect)
}

func (e *parseError) Is(target error) bool { return target == ErrInvalid }

func parse(s string) (Policy, error) {
	return parseWords(strings.Fields(s), s)
}

func parseWords(words []string, text string) (Policy, error) {
	i := 0
	fail := func(expect string) (Policy, error) {
		w := ""
		if i < len(words) {
			w = words[i]
		}
		return Policy{}, &parseError{text: text, word: w, expect: expect}
	}
	peek := func() string {
		if i < len(words) {
			return words[i]
		}
		return ""
	}
	duration := func() (time.Duration, bool) {
		d, err := time.ParseDuration(peek())
		if err != nil {
			return 0, false
		}
		i++
		return d, true
	}

	c := config{reset: resetOnSuccess, maxHint: defaultMaxHint}
	switch kw := peek(); kw {
	case "default":
		c = defaultConfig
		i++
	case "exponential", "constant":
		i++
		d, ok := duration()
		if !ok {
			return fail("a duration such as 100ms after " + strconv.Quote(kw))
		}
		c.kind, c.base, c.factor = constant, d, 1
		if kw == "exponential" {
			c.kind, c.factor = exponential, 2
			if i < len(words) {
				if rest, ok := cutFactor(words[i]); ok {
					f, err := strconv.ParseFloat(rest, 64)
					if err != nil {
						return fail("a factor such as x2 or x1.6")
					}
					c.factor = f
					i++
				}
			}
		}
	case "custom":
		return fail("default, exponential or constant (a custom schedule is built in code, with Custom)")
	default:
		return fail("a schedule: default, exponential DURATION or constant DURATION")
	}

	seen := map[string]bool{}
	for i < len(words) {
		kw := words[i]
		if seen[kw] {
			return fail("each setting once; " + strconv.Quote(kw) + " is given twice")
		}
		seen[kw] = true
		i++
		switch kw {
		case "cap", "elapsed", "attempt-timeout", "max-hint":
			d, ok := duration()
			if !ok {
				return fail("a duration such as 5s after " + strconv.Quote(kw))
			}
			switch kw {
			case "cap":
				c.cap = d
			case "elapsed":
				c.maxElapsed = d
			case "max-hint":
				c.maxHint = d
			default:
				c.attemptTime = d
			}
		case "attempts":
			n, err := strconv.Atoi(peek())
			if err != nil {
				return fail("a whole number of attempts after \"attempts\"")
			}
			i++
			c.maxAttempts = n
		case "jitter":
			k, ok := parseJitterKind(peek())
			if !ok {
				return fail("a jitter kind: none, full, equal, decorrelated, proportional or symmetric")
			}
			i++
			c.jitter = backoff.Jitter{Kind: k}
			if i < len(words) {
				if f, err := strconv.ParseFloat(words[i], 64); err == nil {
					c.jitter.Fraction = f
					i++
				}
			}
		case "reset":
			r, n := ResetRule{}, 0
		rules:
			for i < len(words) {
				switch words[i] {
				case "none":
					if n > 0 {
						return fail("\"none\" alone after \"reset\"")
					}
					i++
					n = -1
					break rules
				case "success":
					if r.OnSuccess {
						return fail("each reset rule once")
					}
					r.OnSuccess = true
					i++
				case "stable", "idle":
					w := words[i]
					if (w == "stable" && r.AfterStableRun != 0) || (w == "idle" && r.AfterIdle != 0) {
						return fail("each reset rule once")
					}
					i++
					d, ok := duration()
					if !ok {
						return fail("a duration such as 10m after " + strconv.Quote(w))
					}
					if w == "stable" {
						r.AfterStableRun = d
					} else {
						r.AfterIdle = d
					}
				default:
					break rules
				}
				n++
			}
			if n == 0 {
				return fail("a reset rule after \"reset\": none, success, stable DURATION or idle DURATION")
			}
			c.reset = r
		default:
			i--
			return fail("a setting: cap, attempts, elapsed, jitter, attempt-timeout, max-hint or reset")
		}
	}
	c.seal()
	if c.err != nil {
		return Policy{}, fmt.Errorf("policy: parse %q: %w", text, c.err)
	}
	return Policy{c: &c}, nil
}

// cutFactor splits a factor word such as "x2" or "×1.6".
func cutFactor(w string) (string, bool) {
	if rest, ok := strings.CutPrefix(w, "x"); ok {
		return rest, true
	}
	return strings.CutPrefix(w, "×")
}

// parseJitterKind returns the kind named s, as JitterKind.String spells it.
func parseJitterKind(s string) (backoff.JitterKind, bool) {
	for k := backoff.NoJitter; k <= backoff.Symmetric; k++ {
		if s == k.String() {
			return k, true
		}
	}
	return 0, false
}

// repeatedKey reports a key that some object of the JSON value read by dec
// holds twice. encoding/json keeps the last of them without a word; a
// policy, as its text form, takes each setting once. dec reads a value that
// has already decoded without error.
func repeatedKey(dec *json.Decoder) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch tok {
	case json.Delim('{'):
		var seen []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return "", false
			}
			key, _ := tok.(string)
			// encoding/json matches keys to fields without regard to
			// case ("ATTEMPTS" sets attempts), as strings.EqualFold does.
			for _, k := range seen {
				if strings.EqualFold(k, key) {
					return k, true
				}
			}
			seen = append(seen, key)
			if key, ok := repeatedKey(dec); ok {
				return key, true
			}
		}
		_, _ = dec.Token() // '}'
	case json.Delim('['):
		for dec.More() {
			if key, ok := repeatedKey(dec); ok {
				return key, true
			}
		}
		_, _ = dec.Token() // ']'
	}
	return "", false
}
