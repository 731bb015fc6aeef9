package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

// Parse reads a policy from its text form, such as
// "exponential 100ms cap 5s attempts 5". [Policy.UnmarshalText] gives the
// grammar. Its errors match [ErrInvalid].
func Parse(s string) (Policy, error) {
	var p Policy
	err := p.UnmarshalText([]byte(s))
	return p, err
}

// MarshalText returns the policy's text form, as String gives it. It leaves
// out the settings that have no text form, because they are wiring, not
// configuration: a clock, a retry predicate, a random source, a guard and
// hedging. A custom policy has no text form, and is an error matching
// [ErrInvalid], as is an invalid policy.
//
// With [Policy.UnmarshalText], it makes a Policy a configuration value as
// the standard library understands one. encoding/json writes it as a string
// that holds its text form. flag.TextVar reads it from the command line:
//
//	p := policy.Default()
//	flag.TextVar(&p, "retry", p, "retry policy, e.g. \"exponential 100ms x2 cap 5s attempts 5\"")
func (p Policy) MarshalText() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.cfg().kind == custom {
		return nil, invalidf("policy: a custom schedule has no text form")
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
// Words are separated by spaces. DURATION is what time.ParseDuration reads.
// KIND is one of none, full, equal, decorrelated, proportional and
// symmetric. The factor is one word with its "x", as in x1.6, and "×" may
// stand for the "x". An exponential schedule without a factor doubles.
// "default" is [Default], and the settings after it change it. Each setting
// may appear once.
//
// Empty text is an error matching [ErrInvalid]. Write "default" for the
// default policy. Malformed text is an error matching ErrInvalid too. It
// quotes the bad word and says what was expected. Text that parses into a policy Validate
// rejects is an error matching ErrInvalid too. On error *p is left as it
// was: there is no half-parsed policy.
//
// On success the text replaces *p whole. The settings that have no words
// are reset to none: a clock, a guard, hedging, a retry predicate and a
// random source. Give them after reading. For example, call p.WithGuard(g)
// on the policy that a flag or a file produced.
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
// Errors match [ErrInvalid]. An error in an object names the field at
// fault, such as "attempt_timeout". An object must name its "schedule", as
// the text form must. Field names match in any case, as encoding/json
// matches them. An empty object {} and an empty string are errors:
// write "default" for the default policy. An unknown field is
// an error, and so is a field given twice, where encoding/json alone would
// keep the last. An absent "reset" is the default reset rule. A JSON null
// leaves p as it was, as encoding/json does for other types; so does a
// missing key, and a Policy that nothing set is the zero Policy, which is
// invalid.
func (p *Policy) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return invalidf("policy: %v", err)
		}
		return p.UnmarshalText([]byte(s))
	}
	obj, err := decodeJSONObject(data)
	if err != nil {
		return err
	}
	if *obj == (jsonObject{}) {
		return errEmpty
	}
	// Spell the object as text, so that both forms share one parser and one
	// set of checks.
	words, err := jsonWords(obj)
	if err != nil {
		return err
	}
	q, err := parseWords(words, strings.Join(words, " "))
	if err != nil {
		return jsonSettingsError(err)
	}
	*p = q
	return nil
}

// jsonSettingsError words the error of an object whose settings make an
// invalid policy in JSON's terms: it names the fields, not the words of the
// text form that the object was spelled as.
func jsonSettingsError(err error) error {
	var se *settingsError
	if !errors.As(err, &se) {
		return err
	}
	errs := []error{se.err}
	if j, ok := se.err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		var ie *invalidError
		if !errors.As(e, &ie) {
			return err
		}
		parts = append(parts, fmt.Sprintf("%q: %s", jsonField(ie.setting), ie.reason))
	}
	return invalidf("policy: JSON: %s", strings.Join(parts, "; "))
}

// jsonField names the field of the object form that sets a setting.
func jsonField(setting string) string {
	if setting == "delay" {
		return "base"
	}
	return strings.ReplaceAll(setting, "-", "_")
}

// jsonDuration checks that the field holds a duration, so that a bad one is
// named by its field rather than by a word of the text form.
func jsonDuration(field, v string) error {
	if _, err := time.ParseDuration(v); err != nil {
		return invalidf("policy: JSON: %q: %q is not a duration such as \"5s\"", field, v)
	}
	return nil
}

// jsonObject is the object form of a policy. Its Go type never shows in an
// error: jsonDecodeError words encoding/json's errors in JSON's terms.
type jsonObject struct {
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

// decodeJSONObject reads the object form, rejecting unknown and repeated
// fields.
func decodeJSONObject(data []byte) (*jsonObject, error) {
	var obj jsonObject
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return nil, jsonDecodeError(err)
	}
	if key, ok := repeatedKey(json.NewDecoder(bytes.NewReader(data))); ok {
		return nil, invalidf("policy: JSON: %q given twice; each setting may appear once", key)
	}
	return &obj, nil
}

// jsonFields are the object form's field names, for the error that rejects
// an unknown one.
const jsonFields = "schedule, base, factor, cap, attempts, elapsed, jitter, jitter_fraction, attempt_timeout, max_hint and reset (success, stable, idle)"

// jsonDecodeError words an error of encoding/json in JSON's terms. Its own
// messages name Go types, such as the unnamed struct of a reset rule.
func jsonDecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var msg string
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		msg = fmt.Sprintf("%q takes %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		msg = fmt.Sprintf("a policy is a JSON object or string, not a JSON %s", typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		msg = strings.TrimPrefix(err.Error(), "json: ") + "; the fields are " + jsonFields
	default:
		msg = strings.TrimPrefix(err.Error(), "json: ")
	}
	return invalidf("policy: JSON: %s", msg)
}

// jsonKind names what a field of jsonObject holds, in JSON's words.
func jsonKind(t reflect.Type) string {
	switch {
	case t == nil:
		return "another value"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int || t.Kind() == reflect.Float64:
		return "a number"
	default:
		return "an object"
	}
}

// jsonWords spells the object form as the words of the text form, in the
// grammar's order: schedule, settings, reset rule.
func jsonWords(obj *jsonObject) ([]string, error) {
	if err := jsonDurations(obj); err != nil {
		return nil, err
	}
	words, err := jsonScheduleWords(obj)
	if err != nil {
		return nil, err
	}
	add := func(ws ...string) { words = append(words, ws...) }
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
		if _, ok := parseJitterKind(obj.Jitter); !ok {
			return nil, invalidf("policy: JSON: \"jitter\": %q is not one of none, full, equal, decorrelated, proportional and symmetric", obj.Jitter)
		}
		add("jitter", obj.Jitter)
	}
	if obj.JitterFraction != nil {
		if obj.Jitter == "" {
			return nil, invalidf("policy: JSON: \"jitter_fraction\" given without \"jitter\"")
		}
		add(formatFloat(*obj.JitterFraction))
	}
	if obj.AttemptTimeout != "" {
		add("attempt-timeout", obj.AttemptTimeout)
	}
	if obj.MaxHint != "" {
		add("max-hint", obj.MaxHint)
	}
	return append(words, jsonResetWords(obj)...), nil
}

// jsonDurations checks the fields that hold durations.
func jsonDurations(obj *jsonObject) error {
	fields := [][2]string{
		{"base", obj.Base}, {"cap", obj.Cap}, {"elapsed", obj.Elapsed},
		{"attempt_timeout", obj.AttemptTimeout}, {"max_hint", obj.MaxHint},
	}
	if obj.Reset != nil {
		fields = append(fields, [2]string{"reset.stable", obj.Reset.Stable}, [2]string{"reset.idle", obj.Reset.Idle})
	}
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		if err := jsonDuration(f[0], f[1]); err != nil {
			return err
		}
	}
	return nil
}

// jsonScheduleWords spells the schedule: "default", or its name, base and
// factor.
func jsonScheduleWords(obj *jsonObject) ([]string, error) {
	var words []string
	switch obj.Schedule {
	case "":
		return nil, invalidf("policy: JSON: \"schedule\" is missing: give \"default\" for the kubelet back-off, or \"exponential\" or \"constant\" with a \"base\"")
	case "default":
		if obj.Base != "" {
			return nil, invalidf("policy: JSON: \"base\" given with \"schedule\": \"default\", whose base is 10s: use \"exponential\" for another base")
		}
		words = append(words, "default")
	case "exponential", "constant":
		if obj.Base == "" {
			return nil, invalidf("policy: JSON: \"schedule\": %q needs \"base\", a duration such as \"100ms\"", obj.Schedule)
		}
		words = append(words, obj.Schedule, obj.Base)
	default:
		return nil, invalidf("policy: JSON: \"schedule\": %q is not one of \"default\", \"exponential\" and \"constant\"", obj.Schedule)
	}
	if obj.Factor != nil {
		if obj.Schedule != "exponential" {
			return nil, invalidf("policy: JSON: \"factor\" needs \"schedule\": \"exponential\"; only an exponential schedule grows")
		}
		words = append(words, "x"+formatFloat(*obj.Factor))
	}
	return words, nil
}

// jsonResetWords spells the reset rule; an absent one is no words, which
// leaves the default rule, and an empty one is "reset none".
func jsonResetWords(obj *jsonObject) []string {
	r := obj.Reset
	if r == nil {
		return nil
	}
	words := []string{"reset"}
	if !r.Success && r.Stable == "" && r.Idle == "" {
		words = append(words, "none")
	}
	if r.Success {
		words = append(words, "success")
	}
	if r.Stable != "" {
		words = append(words, "stable", r.Stable)
	}
	if r.Idle != "" {
		words = append(words, "idle", r.Idle)
	}
	return words
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

// errEmpty refuses empty text and an empty JSON object. A missing
// configuration section would otherwise become the default policy, which
// has no attempt or time limit.
var errEmpty = invalidf("policy: no settings given; write \"default\" for the default policy")

func parse(s string) (Policy, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return Policy{}, errEmpty
	}
	return parseWords(words, s)
}

// parseWords reads a policy from the words of its text form; text is the
// whole text, for errors.
func parseWords(words []string, text string) (Policy, error) {
	ps := &textParser{
		words: words,
		text:  text,
		c:     config{reset: resetOnSuccess, maxHint: defaultMaxHint},
	}
	if err := ps.schedule(); err != nil {
		return Policy{}, err
	}
	seen := map[string]bool{}
	for ps.i < len(ps.words) {
		kw := ps.words[ps.i]
		if seen[kw] {
			return Policy{}, ps.fail("each setting once; " + strconv.Quote(kw) + " is given twice")
		}
		seen[kw] = true
		ps.i++
		if err := ps.setting(kw); err != nil {
			return Policy{}, err
		}
	}
	c := ps.c
	c.seal()
	if c.err != nil {
		return Policy{}, &settingsError{text: text, err: c.err}
	}
	return Policy{c: &c}, nil
}

// settingsError is text that parses into an invalid policy. It quotes the
// text once, then each invalid setting without the "policy: " prefix that
// the message already has.
type settingsError struct {
	text string
	err  error // the policy's validation error, matching ErrInvalid
}

func (e *settingsError) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimPrefix(line, "policy: ")
	}
	return fmt.Sprintf("policy: parse %q: %s", e.text, strings.Join(lines, "; "))
}

func (e *settingsError) Unwrap() error { return e.err }

// textParser reads the words of a policy's text form into c, one rule of
// the grammar per method. i is the next word.
type textParser struct {
	words []string
	text  string
	i     int
	c     config
}

// peek returns the next word, or "" at the end.
func (ps *textParser) peek() string {
	if ps.i < len(ps.words) {
		return ps.words[ps.i]
	}
	return ""
}

// fail reports that the next word is not what expect says.
func (ps *textParser) fail(expect string) error {
	return &parseError{text: ps.text, word: ps.peek(), expect: expect}
}

// duration reads the next word as a duration, if it is one.
func (ps *textParser) duration() (time.Duration, bool) {
	d, err := time.ParseDuration(ps.peek())
	if err != nil {
		return 0, false
	}
	ps.i++
	return d, true
}

// schedule reads "default", "exponential" DURATION [ "x"FACTOR ] or
// "constant" DURATION.
func (ps *textParser) schedule() error {
	switch kw := ps.peek(); kw {
	case "default":
		ps.c = defaultConfig
		ps.i++
		return nil
	case "exponential", "constant":
		ps.i++
		d, ok := ps.duration()
		if !ok {
			return ps.fail("a duration such as 100ms after " + strconv.Quote(kw))
		}
		ps.c.kind, ps.c.base, ps.c.factor = constant, d, 1
		if kw == "exponential" {
			ps.c.kind, ps.c.factor = exponential, 2
			return ps.factor()
		}
		return nil
	case "custom":
		return ps.fail("default, exponential or constant (a custom schedule is built in code, with Custom)")
	default:
		return ps.fail("a schedule: default, exponential DURATION or constant DURATION")
	}
}

// factor reads an exponential schedule's optional "x"FACTOR.
func (ps *textParser) factor() error {
	rest, ok := cutFactor(ps.peek())
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(rest, 64)
	if err != nil {
		return ps.fail("a factor such as x2 or x1.6")
	}
	ps.c.factor = f
	ps.i++
	return nil
}

// setting reads what follows the setting word kw, which has been read.
func (ps *textParser) setting(kw string) error {
	switch kw {
	case "cap":
		return ps.durationSetting(kw, &ps.c.cap)
	case "elapsed":
		return ps.durationSetting(kw, &ps.c.maxElapsed)
	case "attempt-timeout":
		return ps.durationSetting(kw, &ps.c.attemptTime)
	case "max-hint":
		return ps.durationSetting(kw, &ps.c.maxHint)
	case "attempts":
		return ps.attempts()
	case "jitter":
		return ps.jitter()
	case "reset":
		return ps.reset()
	default:
		ps.i--
		return ps.fail("a setting: cap, attempts, elapsed, jitter, attempt-timeout, max-hint or reset")
	}
}

// durationSetting reads the DURATION after kw into d.
func (ps *textParser) durationSetting(kw string, d *time.Duration) error {
	v, ok := ps.duration()
	if !ok {
		return ps.fail("a duration such as 5s after " + strconv.Quote(kw))
	}
	*d = v
	return nil
}

// attempts reads the INT after "attempts".
func (ps *textParser) attempts() error {
	n, err := strconv.Atoi(ps.peek())
	if err != nil {
		return ps.fail("a whole number of attempts after \"attempts\"")
	}
	ps.i++
	ps.c.maxAttempts = n
	return nil
}

// jitter reads KIND [ FRACTION ] after "jitter".
func (ps *textParser) jitter() error {
	k, ok := parseJitterKind(ps.peek())
	if !ok {
		return ps.fail("a jitter kind: none, full, equal, decorrelated, proportional or symmetric")
	}
	ps.i++
	ps.c.jitter = backoff.Jitter{Kind: k}
	if f, err := strconv.ParseFloat(ps.peek(), 64); err == nil {
		ps.c.jitter.Fraction = f
		ps.i++
	}
	return nil
}

// reset reads what follows "reset": "none" alone, or one or more of
// "success", "stable" DURATION and "idle" DURATION, each once.
func (ps *textParser) reset() error {
	if ps.peek() == "none" {
		ps.i++
		ps.c.reset = ResetRule{}
		return nil
	}
	var r ResetRule
	n := 0
	for ; isResetRule(ps.peek()); n++ {
		if err := ps.resetRule(&r); err != nil {
			return err
		}
	}
	if n == 0 {
		return ps.fail("a reset rule after \"reset\": none, success, stable DURATION or idle DURATION")
	}
	ps.c.reset = r
	return nil
}

// isResetRule reports whether w starts a reset rule.
func isResetRule(w string) bool {
	switch w {
	case "none", "success", "stable", "idle":
		return true
	}
	return false
}

// resetRule reads one reset rule into r. "none" here follows other rules.
func (ps *textParser) resetRule(r *ResetRule) error {
	switch w := ps.peek(); w {
	case "none":
		return ps.fail("\"none\" alone after \"reset\"")
	case "success":
		if r.OnSuccess {
			return ps.fail("each reset rule once")
		}
		r.OnSuccess = true
		ps.i++
		return nil
	case "stable":
		return ps.resetDuration(w, &r.AfterStableRun)
	default: // "idle", the last word isResetRule lets reset pass here
		return ps.resetDuration(w, &r.AfterIdle)
	}
}

// resetDuration reads "stable" or "idle" (w) and its DURATION into d. A
// rule already set is given twice; one set to 0s counts as unset, so
// "stable 0s stable 1s" is accepted, as it always has been.
func (ps *textParser) resetDuration(w string, d *time.Duration) error {
	if *d != 0 {
		return ps.fail("each reset rule once")
	}
	ps.i++
	v, ok := ps.duration()
	if !ok {
		return ps.fail("a duration such as 10m after " + strconv.Quote(w))
	}
	*d = v
	return nil
}

// cutFactor splits a factor word such as "x2" or "×1.6".
func cutFactor(w string) (string, bool) {
	if rest, ok := strings.CutPrefix(w, "x"); ok {
		return rest, true
	}
	return strings.CutPrefix(w, "×")
}

// jitterNames are the names of the jitter kinds in the text form, by kind:
// the zero kind, no jitter, is "none".
var jitterNames = [...]string{
	0:                    "none",
	backoff.Full:         "full",
	backoff.Equal:        "equal",
	backoff.Decorrelated: "decorrelated",
	backoff.Proportional: "proportional",
	backoff.Symmetric:    "symmetric",
}

// jitterName returns the name of kind k in the text form, or "jitter(k)"
// for a kind that has none.
func jitterName(k backoff.JitterKind) string {
	if int(k) < len(jitterNames) {
		return jitterNames[k]
	}
	return "jitter(" + strconv.Itoa(int(k)) + ")"
}

// parseJitterKind returns the kind named s in the text form.
func parseJitterKind(s string) (backoff.JitterKind, bool) {
	for k, name := range jitterNames {
		if s == name {
			return backoff.JitterKind(k), true
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
