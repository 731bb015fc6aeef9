package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// The settings a run takes without -policy.
const (
	defaultDelay    = time.Second
	defaultCap      = time.Minute
	defaultAttempts = 5
	defaultGrace    = 5 * time.Second
)

// config is what the command line asks for, checked.
type config struct {
	policy  policy.Policy
	timeout time.Duration // the whole run; 0 is none
	grace   time.Duration // from SIGTERM to SIGKILL when a timeout ends an attempt
	codes   map[int]bool  // the statuses of -on or -not-on; nil retries every failure
	onlyOn  bool          // codes are those retried (-on), not those never retried (-not-on)
	until   *regexp.Regexp
	stdin   bool
	hold    bool
	quiet   bool
	json    bool
	argv    []string // the command and its arguments
}

// flags holds the flags as given, before they are checked.
type flags struct {
	fs                    *flag.FlagSet
	policy, on, notOn     string
	until                 string
	attempts              int
	delay, cap, timeout   time.Duration
	attemptTimeout, grace time.Duration
	stdin, hold           bool
	quiet, jsonLines      bool
}

func newFlags() *flags {
	f := &flags{fs: flag.NewFlagSet("retry", flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(io.Discard) // errors are reported by parseArgs, help by printHelp
	fs.StringVar(&f.policy, "policy", "", "the whole policy in its `text` form, as policy.Parse reads it, e.g. \"exponential 1s cap 30s attempts 5 jitter full\"")
	fs.IntVar(&f.attempts, "attempts", defaultAttempts, "make at most `N` attempts, counting the first; 0 is no limit")
	fs.DurationVar(&f.delay, "delay", defaultDelay, "the first wait; each further wait doubles, up to -cap; 0 retries at once")
	fs.DurationVar(&f.cap, "cap", defaultCap, "the longest wait (raised to -delay when that is longer); 0 is no cap")
	fs.DurationVar(&f.timeout, "timeout", 0, "end the whole run after this long, the running attempt included; 0 is none")
	fs.DurationVar(&f.attemptTimeout, "attempt-timeout", 0, "end an attempt that runs this long, and count it as a failure; 0 is none")
	fs.DurationVar(&f.grace, "grace", defaultGrace, "after a timeout's SIGTERM, wait this long before SIGKILL")
	fs.StringVar(&f.on, "on", "", "retry only failures with these exit `codes` (comma-separated, 1 to 255)")
	fs.StringVar(&f.notOn, "not-on", "", "retry every failure except those with these exit `codes`")
	fs.StringVar(&f.until, "until", "", "succeed when a line of output matches `regexp`, whatever the exit status; retry until one does")
	fs.BoolVar(&f.stdin, "stdin", false, "read standard input once, to its end, and give it to every attempt")
	fs.BoolVar(&f.hold, "hold", false, "hold standard output back until the attempt ends: pass on only the output of the attempt that succeeds, and send the others' to standard error")
	fs.BoolVar(&f.quiet, "quiet", false, "write no lines of retry's own, except errors that stop it before the first attempt")
	fs.BoolVar(&f.jsonLines, "json", false, "write one JSON line per attempt to standard error, instead of the text lines")
	return f
}

// parseArgs reads the command line. Its errors are usage errors: retry
// exits with status 2 before anything runs. -h gives flag.ErrHelp.
func parseArgs(args []string) (config, error) {
	f := newFlags()
	if err := f.fs.Parse(args); err != nil {
		return config{}, err
	}
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return f.check(given)
}

// check turns the flags into a config, or says what is wrong with them.
func (f *flags) check(given map[string]bool) (config, error) {
	c := config{timeout: f.timeout, grace: f.grace, stdin: f.stdin, hold: f.hold, quiet: f.quiet, json: f.jsonLines, argv: f.fs.Args()}
	durations := []struct {
		name string
		d    time.Duration
	}{{"delay", f.delay}, {"cap", f.cap}, {"timeout", f.timeout}, {"attempt-timeout", f.attemptTimeout}, {"grace", f.grace}}
	for _, d := range durations {
		if d.d < 0 {
			return c, fmt.Errorf("-%s %v is negative", d.name, d.d)
		}
	}
	switch {
	case len(c.argv) == 0:
		return c, errors.New("no command given")
	case given["on"] && given["not-on"]:
		return c, errors.New("-on and -not-on conflict: give one")
	case f.quiet && f.jsonLines:
		return c, errors.New("-quiet and -json conflict: give one")
	}
	var err error
	if c.policy, err = f.buildPolicy(given); err != nil {
		return c, err
	}
	c.onlyOn = given["on"]
	name, list := "not-on", f.notOn
	if c.onlyOn {
		name, list = "on", f.on
	}
	if given[name] {
		if c.codes, err = parseCodes(list); err != nil {
			return c, fmt.Errorf("-%s: %w", name, err)
		}
	}
	if given["until"] {
		if c.until, err = regexp.Compile(f.until); err != nil {
			return c, fmt.Errorf("-until: %w", err)
		}
	}
	c.policy = c.policy.WithRetryIf(retryIf(c.codes, c.onlyOn))
	return c, nil
}

// buildPolicy makes the run's policy: -policy's text, or the default
// schedule made of -delay and -cap, and the shorthands on top. A shorthand
// for a setting that -policy's text gives too is a conflict, not an
// override, so that no setting is silently dropped.
func (f *flags) buildPolicy(given map[string]bool) (policy.Policy, error) {
	var p policy.Policy
	if given["policy"] {
		var err error
		if p, err = policy.Parse(f.policy); err != nil {
			return p, err // policy.Parse quotes the text and the bad word
		}
		words := strings.Fields(f.policy)
		for _, name := range []string{"delay", "cap", "attempts", "attempt-timeout"} {
			// -policy always names a schedule, so -delay always conflicts.
			if given[name] && (name == "delay" || slices.Contains(words, name)) {
				return p, fmt.Errorf("-%s and -policy %q conflict: give the setting once", name, f.policy)
			}
		}
	} else {
		p = policy.Constant(0)
		if f.delay > 0 {
			p = policy.Exponential(f.delay)
		}
		p = p.WithCap(max(defaultCap, f.delay)).WithMaxAttempts(defaultAttempts)
	}
	if given["cap"] {
		p = p.WithCap(f.cap)
	}
	if given["attempts"] {
		p = p.WithMaxAttempts(f.attempts)
	}
	if given["attempt-timeout"] {
		p = p.WithAttemptTimeout(f.attemptTimeout)
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}

// parseCodes reads a comma-separated list of exit statuses.
func parseCodes(s string) (map[int]bool, error) {
	codes := map[int]bool{}
	for _, word := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(word))
		if err != nil || n < 1 || n > 255 {
			return nil, fmt.Errorf("bad exit status %q, expected a number from 1 to 255", word)
		}
		codes[n] = true
	}
	return codes, nil
}

// retryIf returns the policy's retry predicate: whether a failed attempt
// is retried. Exit statuses in codes are retried when onlyOn (-on), and
// never retried otherwise (-not-on); nil codes retry every failure. An
// attempt that its timeout ended, and one that exited 0 without the line
// -until asks for, are always retried.
func retryIf(codes map[int]bool, onlyOn bool) func(error) bool {
	return func(err error) bool {
		var e *exitError
		switch {
		case errors.Is(err, retry.ErrAttemptTimeout):
			return true
		case !errors.As(err, &e), e.status == 0, codes == nil:
			return true
		}
		return codes[e.status] == onlyOn
	}
}

// printHelp writes the usage and the flags to w.
func printHelp(w io.Writer) {
	fmt.Fprint(w, `usage: retry [flags] -- command [args...]

Runs the command until it succeeds (exit 0), fails for good, or the policy
says stop. Without -policy: at most 5 attempts, waits of 1s, 2s, 4s, 8s.

`)
	f := newFlags()
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	fmt.Fprint(w, `
Exit status: the command's last; 2 for bad flags, before anything runs;
127 or 126 when the command cannot be found or run; 128+N when signal N
ends the run during a wait. Details and recipes:
go doc github.com/retrykit/retrykit/cmd/retry
`)
}
