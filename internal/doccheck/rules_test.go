package doccheck_test

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A rule is stated in full in its home and in one sentence and a link
// anywhere else. Its facts are the distinctive parts of its full statement:
// a text that holds at least need of them states the rule in full.
type rule struct {
	name   string
	homes  []string // files, relative to the repository's root, that may state it in full
	single bool     // the homes together may hold one such text only
	need   int
	facts  []*regexp.Regexp
}

// facts compiles the regular expressions of a rule's facts. They match the
// text as text() leaves it: lower case, one space between words, no
// Markdown or doc-link marks.
func facts(res ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(res))
	for i, re := range res {
		out[i] = regexp.MustCompile(re)
	}
	return out
}

// rules are the rules that were once stated in many places. Each fact is a
// piece of the full statement that a one-sentence mention with a link does
// not need; need is set so that the home's statement holds well more than
// need of them and a short mention fewer.
var rules = []rule{
	{
		name:  "new calls held back (the shed rule)",
		homes: []string{"policy/guard.go", "docs/admission.md"},
		need:  4,
		facts: facts(
			`\b16 attempts\b`,
			`\b(its|their|a) turn\b`,
			`first come,? first served`,
			`\berrshed\b`,
			`\bin a row\b`,
			`(limits?|attempts|deadline|time limit) (come|came|run out|runs out) first`,
			`(probe|one a second|once a second)`,
			`(new call|new request|first attempt)s?('s first attempt)? (waits|wait|is held)`,
			`(running )?attempt ends,? or .{0,20}dependency answers`,
		),
	},
	{
		name:   "how a call ends (the list of sentinels)",
		homes:  []string{"docs/calls.md"},
		single: true,
		need:   4,
		facts: facts(
			`\berrexhausted\b`,
			`\berrthrottled\b`,
			`\berrshed\b`,
			`\berrhinttoolong\b`,
			`\berrpushback\b`,
			`\berrattempttimeout\b`,
		),
	},
	{
		name:  "what overload is",
		homes: []string{"policy/guard.go"},
		need:  5,
		facts: facts(
			`timeout\(\) bool|timeout method`,
			`attempt timeout cut`,
			`hint to wait`,
			`\b429\b.{0,40}\b504\b`,
			`5xx (with|that carries) retry-after`,
			`500, 502 or 503`,
			`status (that carries|with) a pushback`,
			`fast failure`,
			`(caller's|request's) own context`,
		),
	},
	{
		name:  "the guard's tokens",
		homes: []string{"policy/guard.go"},
		need:  4,
		facts: facts(
			`whole token`,
			`[−-]r/2`,
			`\+r\b`,
			`(alone|only one|the only call) in flight`,
			`nine tenths`,
			`one (retry|probe) a second`,
			`never goes below zero`,
		),
	},
	{
		name:  "the hint ceiling",
		homes: []string{"policy/policy.go"},
		need:  4,
		facts: facts(
			`\bas given\b`,
			`(even )?above the cap|not cut to the (policy's )?cap|never cut short`,
			`(five|5) minutes`,
			`\berrhinttoolong\b`,
			`earlier than (a server )?asked`,
			`never sleeps|quietly shortens`,
		),
	},
	{
		name:  "the attempt timeout",
		homes: []string{"policy/policy.go"},
		need:  4,
		facts: facts(
			`(attempt timeout|attempt's own timeout|its own timeout) (cut|cuts)|cut off by (it|the policy's attempt timeout|its own timeout)`,
			`\bis retried\b`,
			`\berrattempttimeout\b`,
			`\bdeadlineexceeded\b.{0,80}(both|too|tell)`,
			`caller's context (cut|is done)`,
		),
	},
	{
		name:  "which requests are safe to repeat (idempotency)",
		homes: []string{"retryhttp/retryable.go"},
		need:  2,
		facts: facts(
			`get, head, options, trace, put,? (and|or) delete`,
			`idempotency-key header (with a value|that is not empty)|non-empty idempotency-key`,
			`rfc 9110`,
		),
	},
	{
		name:  "what a connection error is",
		homes: []string{"retryhttp/retryable.go"},
		need:  5,
		facts: facts(
			`\brefused\b`,
			`\breset\b`,
			`\beof before\b`,
			`(host name|name) (that )?does not resolve|dns`,
			`certificate`,
			`net\.operror`,
			`port out of range|malformed address|unknown network`,
			`unsupported url scheme`,
			`(base transport's own|network) timeouts?`,
		),
	},
	{
		name:  "each integration's own guard (the admission default)",
		homes: []string{"docs/admission.md"},
		need:  4,
		facts: facts(
			`newguard\(50, 1\)`,
			`(a )?guard of its own`,
			`(is how .{0,20}share|the one way to share)`,
			`no switch|turn(ed)? the guard off|none can be turned off`,
			`each (retryhttp\.transport|retrygrpc interceptor|transport|interceptor)`,
		),
	},
	{
		name:  "when a server asks its callers not to retry",
		homes: []string{"docs/layers.md", "retryhttp/handler.go", "retrygrpc/server.go"},
		need:  5,
		facts: facts(
			`(shed it|errshed)`,
			`(errthrottled|denied its retries|held its retries back)`,
			`(whole token|no token)`,
			`last 16 attempts`,
			`(errpushback|asked (it )?not to retry)`,
			`refused or reset`,
			`(a handler that (succeeds|recovers)|fallback)`,
		),
	},
	{
		name:  "when a call's elapsed time is 0",
		homes: []string{"retry/errors.go"},
		need:  3,
		facts: facts(
			`(elapsed is 0|it is 0|is 0 for a call|0 unless)`,
			`stable-run reset rule`,
			`(times a call|time a call|nothing times)`,
			`(reads? no|never reads?( the)?|not read the) clock`,
		),
	},
}

// A unit is one text that can state a rule: a Markdown section, or a part of
// a Go comment between two of its headings.
type unit struct {
	file  string // relative to the repository's root, with forward slashes
	where string // the heading, or the line the comment starts at
	text  string
}

var markup = strings.NewReplacer("`", "", "*", "", "[", "", "]", "", "’", "'")

// text makes s comparable with the facts: lower case, marks removed, one
// space between words.
func text(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(markup.Replace(s))), " ")
}

// violations returns one message for every unit that states a rule in full
// outside its homes, and for every home beyond the first text of a single rule.
func violations(units []unit, rules []rule) []string {
	var out []string
	for _, r := range rules {
		var inHome []unit
		for _, u := range units {
			n := 0
			for _, f := range r.facts {
				if f.MatchString(u.text) {
					n++
				}
			}
			if n < r.need {
				continue
			}
			if slices.Contains(r.homes, u.file) {
				inHome = append(inHome, u)
				continue
			}
			out = append(out, fmt.Sprintf("rule %q is stated in full in %s (%s, %d of its facts); its home is %s: say it in one sentence and link",
				r.name, u.file, u.where, n, strings.Join(r.homes, " and ")))
		}
		if r.single && len(inHome) > 1 {
			for _, u := range inHome[1:] {
				out = append(out, fmt.Sprintf("rule %q is stated in full twice in its home: in %s and in %s (%s); keep one",
					r.name, inHome[0].where, u.file, u.where))
			}
		}
	}
	return out
}

// markdownUnits splits a Markdown page into its sections, code blocks left out.
func markdownUnits(file, src string) []unit {
	var units []unit
	where, body, fenced := "the top", []string{}, false
	flush := func() {
		units = append(units, unit{file: file, where: where, text: text(strings.Join(body, "\n"))})
		body = body[:0]
	}
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
		case fenced:
		case strings.HasPrefix(line, "#"):
			flush()
			where = strings.TrimSpace(strings.TrimLeft(line, "#"))
		default:
			body = append(body, line)
		}
	}
	flush()
	return units
}

// goUnits splits every comment of a Go file at its doc headings.
func goUnits(file string, src []byte) ([]unit, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var units []unit
	for _, cg := range f.Comments {
		where := fmt.Sprintf("the comment at line %d", fset.Position(cg.Pos()).Line)
		var body []string
		flush := func() {
			units = append(units, unit{file: file, where: where, text: text(strings.Join(body, "\n"))})
			body = body[:0]
		}
		for _, line := range strings.Split(cg.Text(), "\n") {
			if strings.HasPrefix(line, "# ") {
				flush()
				where = fmt.Sprintf("the comment at line %d, %q", fset.Position(cg.Pos()).Line, line[2:])
				continue
			}
			body = append(body, line)
		}
		flush()
	}
	return units, nil
}

// repositoryUnits reads README.md, BENCHMARKS.md, docs/*.md and the
// comments of every Go file of the repository that is not a test, in
// every module.
func repositoryUnits(t *testing.T, root string) []unit {
	t.Helper()
	var units []unit
	for _, name := range pages(t, root) {
		src, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		units = append(units, markdownUnits(filepath.ToSlash(name), string(src))...)
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		us, err := goUnits(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		units = append(units, us...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return units
}

// TestRuleHomes fails when a rule is stated in full outside its home: a
// copy in other words drifts, and the reader cannot tell which to trust.
func TestRuleHomes(t *testing.T) {
	root := repositoryRoot(t)
	units := repositoryUnits(t, root)
	for _, r := range rules {
		found := false
		for _, u := range units {
			n := 0
			for _, f := range r.facts {
				if f.MatchString(u.text) {
					n++
				}
			}
			if n >= r.need && slices.Contains(r.homes, u.file) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("rule %q is stated in full in none of its homes (%s): its facts no longer describe it",
				r.name, strings.Join(r.homes, ", "))
		}
	}
	for _, v := range violations(units, rules) {
		t.Error(v)
	}
}

// TestRuleHomesFails shows that the check can fail: the shed rule's full
// statement in a page that is not its home, and a second list of how a call
// ends, in a Markdown page and in a doc comment.
func TestRuleHomesFails(t *testing.T) {
	page := `# A page

## Shedding

Once the last 16 attempts in a row have shown overload, at most 16 attempts
run at once, and a new call's first attempt waits for its turn. It ends with
retry.ErrShed only when its limits come first.

## Errors

A call ends with ErrExhausted, ErrThrottled, ErrShed or ErrPushback.
`
	comment := []byte(`package p

// Do runs fn. Its error matches [ErrExhausted], [ErrThrottled],
// [ErrHintTooLong] or [ErrAttemptTimeout].
func Do() {}
`)
	units := markdownUnits("docs/seeded.md", page)
	us, err := goUnits("seeded/seeded.go", comment)
	if err != nil {
		t.Fatal(err)
	}
	units = append(units, us...)
	units = append(units, markdownUnits("docs/calls.md", "## How a call ends\n\nErrExhausted, ErrThrottled, ErrShed, ErrHintTooLong.\n\n## Again\n\nErrExhausted, ErrThrottled, ErrShed, ErrPushback.\n")...)

	got := violations(units, rules)
	want := []string{
		`rule "new calls held back (the shed rule)" is stated in full in docs/seeded.md (Shedding`,
		`rule "how a call ends (the list of sentinels)" is stated in full in docs/seeded.md (Errors`,
		`rule "how a call ends (the list of sentinels)" is stated in full in seeded/seeded.go (the comment at line 3`,
		`rule "how a call ends (the list of sentinels)" is stated in full twice in its home`,
	}
	if len(got) != len(want) {
		t.Fatalf("violations() = %q, want %d of them", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("violation %d = %q, want it to start with %q", i, got[i], w)
		}
	}
	if tail := "its home is policy/guard.go and docs/admission.md: say it in one sentence and link"; !strings.Contains(got[0], tail) {
		t.Errorf("violation 0 = %q, want it to end with %q", got[0], tail)
	}
}
