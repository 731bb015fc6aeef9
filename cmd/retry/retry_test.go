//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// retryLine is the line retry writes before each wait.
var retryLine = regexp.MustCompile(`^retry: attempt (\d+): (.+); waiting (\S+) \((\S+) elapsed\)$`)

// retryLines returns the lines of stderr that announce a retry.
func retryLines(stderr []string) []string {
	var found []string
	for _, line := range stderr {
		if retryLine.MatchString(line) {
			found = append(found, line)
		}
	}
	return found
}

func TestFailsTwiceThenSucceeds(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-attempts", "5", "-delay", "1ms"}, childCmd("count", file, "1:first", "1:second", "0:third"))...)
	require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
	require.Equal(t, 3, runs(t, file))
	require.Equal(t, []string{"first", "second", "third"}, o.stdout)
	got := retryLines(o.stderr)
	require.Len(t, got, 2, "stderr: %q", o.stderr)
	for i, line := range got {
		m := retryLine.FindStringSubmatch(line)
		require.Equal(t, fmt.Sprint(i+1), m[1], line)
		require.Equal(t, "exit status 1", m[2], line)
		require.Equal(t, []string{"1ms", "2ms"}[i], m[3], line) // the default schedule doubles from -delay
		_, err := time.ParseDuration(m[4])
		require.NoError(t, err, line)
	}
	require.Regexp(t, `^retry: succeeded after 3 attempts in \S+$`, last(o.stderr))
}

func TestAlwaysFails(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-attempts", "3", "-delay", "1ms"}, childCmd("count", file, "42"))...)
	require.Equal(t, 42, o.code, "the command's own exit status; stderr: %q", o.stderr)
	require.Equal(t, 3, runs(t, file))
	require.Len(t, retryLines(o.stderr), 2, "stderr: %q", o.stderr)
	require.Regexp(t, `^retry: gave up after 3 attempts in \d\S*s: exit status 42$`, last(o.stderr))
}

func TestFirstTrySucceeds(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, childCmd("count", file, "0")...)
	require.Equal(t, 0, o.code)
	require.Equal(t, 1, runs(t, file))
	require.Empty(t, o.stderr, "a first-try success writes nothing")
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   []string
		mode    []string
		status  int
		signal  string
		atLeast time.Duration // two attempts, each cut off at its timeout
	}{
		// SIGTERM ends it: the grace period, far longer, is not waited for.
		{"sigterm", []string{"-attempt-timeout", "300ms", "-grace", "1h"}, nil, 143, "terminated", 600 * time.Millisecond},
		// SIGTERM is ignored: SIGKILL comes after the grace period. The
		// attempt timeout leaves the command time to ignore SIGTERM.
		{"sigkill", []string{"-attempt-timeout", "1s", "-grace", "300ms"}, []string{"ignore-term"}, 137, "killed", 2600 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			flags := append([]string{"-attempts", "2", "-delay", "1ms"}, tc.flags...)
			o := runRetry(t, nil, args(flags, childCmd("hang", append([]string{file}, tc.mode...)...))...)
			require.Equal(t, tc.status, o.code, "stderr: %q", o.stderr)
			require.Equal(t, 2, runs(t, file), "a timed-out attempt counts as a failure and is retried")
			require.Equal(t, []string{"started", "started"}, o.stdout)
			require.GreaterOrEqual(t, o.took, tc.atLeast)
			lines := retryLines(o.stderr)
			require.Len(t, lines, 1, "stderr: %q", o.stderr)
			require.Contains(t, lines[0], "attempt timed out after "+tc.flags[1]+": signal: "+tc.signal)
			require.Regexp(t, `^retry: gave up after 2 attempts in \S+: attempt timed out after `+tc.flags[1]+`: signal: `+tc.signal+`$`, last(o.stderr))
		})
	}
}

// TestTimedOutAttemptThatExitsZero checks that an attempt a timeout ended
// is a failure even when the command, told to stop, exits 0.
func TestTimedOutAttemptThatExitsZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		runs  int
		final string
	}{
		{"attempt timeout", []string{"-attempts", "2", "-attempt-timeout", "300ms"}, 2,
			`^retry: gave up after 2 attempts in \S+: attempt timed out after 300ms: exit status 0$`},
		{"run timeout", []string{"-attempts", "2", "-timeout", "300ms"}, 1,
			`^retry: context deadline exceeded after 1 attempt in \S+: exit status 0$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			flags := append([]string{"-delay", "1ms"}, tc.flags...)
			o := runRetry(t, nil, args(flags, childCmd("hang", file, "exit-0-on-term"))...)
			require.Equal(t, 1, o.code, "a failed run does not exit 0; stderr: %q", o.stderr)
			require.Equal(t, tc.runs, runs(t, file), "stderr: %q", o.stderr)
			require.Regexp(t, tc.final, last(o.stderr))
		})
	}
}

func TestTimeoutEndsTheRun(t *testing.T) {
	t.Parallel()
	t.Run("running attempt", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		o := runRetry(t, nil, args([]string{"-timeout", "500ms", "-attempts", "0", "-delay", "1ms"}, childCmd("hang", file))...)
		require.Equal(t, 143, o.code, "stderr: %q", o.stderr)
		require.Equal(t, 1, runs(t, file))
		require.Regexp(t, `^retry: context deadline exceeded after 1 attempt in \S+: signal: terminated$`, last(o.stderr))
	})
	t.Run("no wait past it", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		o := runRetry(t, nil, args([]string{"-timeout", "1m", "-delay", "1h"}, childCmd("count", file, "3"))...)
		require.Equal(t, 3, o.code, "stderr: %q", o.stderr)
		require.Equal(t, 1, runs(t, file))
		require.Less(t, o.took, 30*time.Second, "retry returns at once rather than wait")
		require.Regexp(t, `^retry: gave up after 1 attempt in \S+ \(the next wait of 1h0m0s would not end before the deadline\): exit status 3$`, last(o.stderr))
	})
}

func TestStdin(t *testing.T) {
	t.Parallel()
	input := make([]byte, 200<<10) // beyond any pipe's buffer
	r := rand.New(rand.NewPCG(1, 2))
	for i := range input {
		input[i] = byte(r.IntN(256))
	}
	t.Run("replayed", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		o := runRetry(t, bytes.NewReader(input), args([]string{"-stdin", "-attempts", "5", "-delay", "1ms"}, childCmd("stdin", file, "1", "1", "0"))...)
		require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
		require.Equal(t, 3, runs(t, file))
		for n := 1; n <= 3; n++ {
			got, err := os.ReadFile(fmt.Sprintf("%s.%d", file, n))
			require.NoError(t, err)
			require.True(t, bytes.Equal(input, got), "attempt %d read %d bytes, not the %d of the input", n, len(got), len(input))
		}
	})
	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		o := runRetry(t, strings.NewReader("once\n"), args([]string{"-attempts", "2", "-delay", "1ms"}, childCmd("stdin", file, "1", "0"))...)
		require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
		for n, want := range []string{"once\n", ""} {
			got, err := os.ReadFile(fmt.Sprintf("%s.%d", file, n+1))
			require.NoError(t, err)
			require.Equal(t, want, string(got), "without -stdin, what attempt 1 read is gone for attempt 2")
		}
	})
}

func TestSignalDuringAttempt(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			p := startRetry(t, nil, args([]string{"-attempts", "5", "-delay", "1ms"}, childCmd("trap", file, "3"))...)
			waitFor(t, p.stdout, &p.out, "ready")
			require.NoError(t, p.cmd.Process.Signal(sig))
			o := p.finish(t)
			require.Equal(t, 3, o.code, "the command's own status; stderr: %q", o.stderr)
			require.Equal(t, 1, runs(t, file), "no attempt after the signal")
			got, err := os.ReadFile(file + ".sig")
			require.NoError(t, err)
			require.Equal(t, sig.String(), string(got), "the signal reached the command")
			require.Regexp(t, `^retry: context canceled after 1 attempt in \S+: cause: got signal `+sig.String()+`: exit status 3$`, last(o.stderr))
		})
	}
}

func TestSignalDuringWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig    syscall.Signal
		status int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGQUIT, 131}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			p := startRetry(t, nil, args([]string{"-delay", "1h"}, childCmd("count", file, "1"))...)
			waitFor(t, p.stderr, &p.errOut, "waiting 1h0m0s")
			require.NoError(t, p.cmd.Process.Signal(tc.sig))
			o := p.finish(t)
			require.Equal(t, tc.status, o.code, "128 + the signal's number; stderr: %q", o.stderr)
			require.Equal(t, 1, runs(t, file))
			require.Less(t, o.took, 30*time.Second, "the wait ends at once")
			require.Regexp(t, `^retry: context canceled after 1 attempt in \S+: cause: got signal `+tc.sig.String()+`: exit status 1$`, last(o.stderr))
		})
	}
}

// TestTimeoutAfterSignal checks that a timeout still ends a command that
// ignores the signal retry passed on: SIGKILL after the grace period.
func TestTimeoutAfterSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, timeout := range []string{"-timeout", "-attempt-timeout"} {
			t.Run(sig.String()+" "+timeout, func(t *testing.T) {
				t.Parallel()
				file := filepath.Join(t.TempDir(), "runs")
				flags := []string{"-attempts", "3", "-delay", "1ms", timeout, "1s", "-grace", "200ms"}
				p := startRetry(t, nil, args(flags, childCmd("hang", file, "ignore-signals"))...)
				waitFor(t, p.stdout, &p.out, "started")
				require.NoError(t, p.cmd.Process.Signal(sig))
				o := p.finish(t)
				require.Equal(t, 137, o.code, "the timeout's SIGKILL ended the command; stderr: %q", o.stderr)
				require.Equal(t, 1, runs(t, file), "no attempt after the signal")
				require.Regexp(t, `^retry: context canceled after 1 attempt in \S+: cause: got signal `+sig.String()+`: signal: killed$`, last(o.stderr))
			})
		}
	}
}

func TestIgnoredSignalStaysIgnored(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	// As nohup does with SIGHUP, a shell starts retry with SIGINT ignored.
	sh := exec.Command("sh", append([]string{"-c", `trap "" INT; exec "$0" "$@"`, binary, "-delay", "1ms"}, childCmd("trap", file, "3")...)...)
	p := start(t, nil, sh)
	waitFor(t, p.stdout, &p.out, "ready")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	o := p.finish(t)
	require.Equal(t, 3, o.code, "stderr: %q", o.stderr)
	got, err := os.ReadFile(file + ".sig")
	require.NoError(t, err)
	require.Equal(t, "terminated", string(got), "SIGINT was not passed on")
}

func TestSignalReachesTheCommandsChildren(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig    syscall.Signal
		status int
	}{
		{syscall.SIGTERM, 143}, // the command dies of it
		{syscall.SIGQUIT, 2},   // the command, a Go program, exits 2 on it: its own status, passed on
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			p := startRetry(t, nil, args([]string{"-attempts", "5", "-delay", "1ms"}, childCmd("family", file))...)
			waitFor(t, p.stdout, &p.out, "ready") // from the command's own child
			require.NoError(t, p.cmd.Process.Signal(tc.sig))
			o := p.finish(t)
			require.Equal(t, tc.status, o.code, "stderr: %q", o.stderr)
			require.Equal(t, 1, runs(t, file))
			// The grandchild writes the file as it ends, maybe after retry has.
			deadline := time.Now().Add(time.Minute)
			for {
				got, err := os.ReadFile(file + ".grand.sig")
				if err == nil && len(got) > 0 {
					require.Equal(t, tc.sig.String(), string(got))
					return
				}
				require.True(t, time.Now().Before(deadline), "the command's child never got the signal")
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestUntil(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		flags    []string
		outcomes []string
		status   int
		runs     int
	}{
		{"matches on the third attempt", []string{"-until", "^ready$"}, []string{"0:waiting", "0:waiting", "0:ready"}, 0, 3},
		{"never matches", []string{"-until", "^ready$", "-attempts", "2"}, []string{"0:not ready"}, 1, 2},
		{"matches whatever the exit status", []string{"-until", "ready"}, []string{"4:ready"}, 0, 1},
		{"matches standard error", []string{"-until", "^ready$"}, []string{"1!ready"}, 0, 1},
		{"a failure without a match keeps its status", []string{"-until", "^ready$", "-attempts", "2"}, []string{"5:no"}, 5, 2},
		{"-on applies to the failures", []string{"-until", "^ready$", "-on", "7"}, []string{"5:no"}, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			flags := append([]string{"-delay", "1ms"}, tc.flags...)
			o := runRetry(t, nil, args(flags, childCmd("count", append([]string{file}, tc.outcomes...)...))...)
			require.Equal(t, tc.status, o.code, "stderr: %q", o.stderr)
			require.Equal(t, tc.runs, runs(t, file))
			if tc.status != 0 {
				require.Contains(t, last(o.stderr), "no line matched -until")
			}
		})
	}
}

// TestUntilKeepsTheOrderOfSharedOutput checks that, with -until, lines the
// command writes to standard output and standard error in turn reach a
// destination the two share (2>&1) in the order they were written.
func TestUntilKeepsTheOrderOfSharedOutput(t *testing.T) {
	t.Parallel()
	const n = 500
	file := filepath.Join(t.TempDir(), "runs")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command(binary, args([]string{"-until", "^never$", "-attempts", "1"}, childCmd("interleave", file, strconv.Itoa(n)))...)
	setEnv(cmd)
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // after a failed test only
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	var exitErr *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exitErr)
	require.Equal(t, 1, exitErr.ExitCode(), "no line matched; output %q", out)
	want := make([]string, 0, 2*n)
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprint("out ", i), fmt.Sprint("err ", i))
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, got, 2*n+1, "the command's lines and retry's last one")
	require.Equal(t, want, got[:2*n])
	require.Regexp(t, `^retry: gave up after 1 attempt in \S+: exit status 0, no line matched -until$`, got[2*n])
}

func TestOnNotOn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		runs  int
		final string // the start of the last line
	}{
		{[]string{"-on", "1,2"}, 1, "retry: not retried after 1 attempt in "},
		{[]string{"-on", "2, 3"}, 3, "retry: gave up after 3 attempts in "},
		{[]string{"-not-on", "3"}, 1, "retry: not retried after 1 attempt in "},
		{[]string{"-not-on", "1,2"}, 3, "retry: gave up after 3 attempts in "},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			flags := append([]string{"-attempts", "3", "-delay", "1ms"}, tc.flags...)
			o := runRetry(t, nil, args(flags, childCmd("count", file, "3"))...)
			require.Equal(t, 3, o.code, "stderr: %q", o.stderr)
			require.Equal(t, tc.runs, runs(t, file))
			require.True(t, strings.HasPrefix(last(o.stderr), tc.final), "last line %q", last(o.stderr))
			require.True(t, strings.HasSuffix(last(o.stderr), ": exit status 3"), "last line %q", last(o.stderr))
		})
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-json", "-attempts", "3", "-delay", "1ms"}, childCmd("count", file, "1!oops", "2", "0"))...)
	require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
	type line struct {
		Attempt  int      `json:"attempt"`
		Status   int      `json:"status"`
		Error    string   `json:"error"`
		Duration float64  `json:"duration"`
		Elapsed  float64  `json:"elapsed"`
		Wait     *float64 `json:"wait"`
		Exit     *int     `json:"exit"`
		Summary  string   `json:"summary"`
	}
	var got []line
	for _, s := range o.stderr {
		if s == "oops" { // the command's own standard error
			continue
		}
		var l line
		d := json.NewDecoder(strings.NewReader(s))
		d.DisallowUnknownFields()
		require.NoError(t, d.Decode(&l), "line %q", s)
		got = append(got, l)
	}
	require.Len(t, got, 3, "stderr: %q", o.stderr)
	for i, l := range got {
		require.Equal(t, i+1, l.Attempt)
		require.Equal(t, []int{1, 2, 0}[i], l.Status)
		require.Equal(t, []string{"exit status 1", "exit status 2", ""}[i], l.Error)
		require.Positive(t, l.Duration)
		require.GreaterOrEqual(t, l.Elapsed, l.Duration)
		if i < 2 {
			require.NotNil(t, l.Wait)
			require.Equal(t, []float64{0.001, 0.002}[i], *l.Wait)
			require.Nil(t, l.Exit)
		} else {
			require.Nil(t, l.Wait)
			require.NotNil(t, l.Exit)
			require.Equal(t, 0, *l.Exit)
		}
	}
	require.Greater(t, got[2].Elapsed, got[1].Elapsed)
	require.Empty(t, got[2].Summary, "a run that succeeded has no summary")
}

func TestJSONUntil(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-json", "-until", "^ok$", "-delay", "1ms"}, childCmd("count", file, "0:no", "0:ok"))...)
	require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
	var matched []bool
	for _, s := range o.stderr {
		var l struct{ Matched *bool }
		require.NoError(t, json.Unmarshal([]byte(s), &l), "line %q", s)
		require.NotNil(t, l.Matched, "line %q", s)
		matched = append(matched, *l.Matched)
	}
	require.Equal(t, []bool{false, true}, matched)
}

func TestJSONFailedRun(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-json", "-attempts", "2", "-delay", "1ms", "-attempt-timeout", "300ms"}, childCmd("hang", file))...)
	require.Equal(t, 143, o.code)
	var final map[string]any
	require.NoError(t, json.Unmarshal([]byte(last(o.stderr)), &final), "stderr: %q", o.stderr)
	require.Equal(t, map[string]any{
		"attempt": 2.0, "status": 143.0, "signal": 15.0, "timed_out": true, "error": "signal: terminated",
		"duration": final["duration"], "elapsed": final["elapsed"], "exit": 143.0,
		"summary": "retry: gave up after 2 attempts in " + strings.TrimPrefix(final["summary"].(string), "retry: gave up after 2 attempts in "),
	}, final)
	require.Regexp(t, `^retry: gave up after 2 attempts in \S+: attempt timed out after 300ms: signal: terminated$`, final["summary"])
}

// TestJSONSignalDuringWait checks the lines of a run a signal ends during
// a wait: the attempt before the wait has its line with the wait, then the
// last line, with exit and summary.
func TestJSONSignalDuringWait(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	p := startRetry(t, nil, args([]string{"-json", "-delay", "1h"}, childCmd("count", file, "1"))...)
	waitFor(t, p.stderr, &p.errOut, `"wait":3600`)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	o := p.finish(t)
	require.Equal(t, 143, o.code, "stderr: %q", o.stderr)
	require.Len(t, o.stderr, 2, "stderr: %q", o.stderr)
	var got []map[string]any
	for _, s := range o.stderr {
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &l), "line %q", s)
		require.Equal(t, 1.0, l["attempt"], "line %q", s)
		got = append(got, l)
	}
	require.Equal(t, 3600.0, got[0]["wait"])
	require.NotContains(t, got[0], "exit")
	require.NotContains(t, got[1], "wait")
	require.Equal(t, 143.0, got[1]["exit"])
	require.Regexp(t, `^retry: context canceled after 1 attempt in \S+: cause: got signal terminated: exit status 1$`, got[1]["summary"])
}

func TestQuiet(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-quiet", "-attempts", "2", "-delay", "1ms"}, childCmd("count", file, "1:out"))...)
	require.Equal(t, 1, o.code)
	require.Equal(t, 2, runs(t, file))
	require.Empty(t, o.stderr)
	require.Equal(t, []string{"out", "out"}, o.stdout, "the command's output still passes through")
}

func TestPolicyText(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, args([]string{"-policy", "constant 2ms attempts 4", "-cap", "1s"}, childCmd("count", file, "1"))...)
	require.Equal(t, 1, o.code, "stderr: %q", o.stderr)
	require.Equal(t, 4, runs(t, file))
	for _, line := range retryLines(o.stderr) {
		require.Equal(t, "2ms", retryLine.FindStringSubmatch(line)[3], line)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		want  string // in the message
	}{
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-attempts", "many"}, `invalid value "many" for flag -attempts`},
		{[]string{"-policy", "exponential 1s forever"}, `bad word "forever"`},
		{[]string{"-policy", "constant 1s attempts -1"}, "invalid attempts"},
		{[]string{"-delay", "-1s"}, "-delay -1s is negative"},
		{[]string{"-timeout", "-1s"}, "-timeout -1s is negative"},
		{[]string{"-attempt-timeout", "-1s"}, "-attempt-timeout -1s is negative"},
		{[]string{"-grace", "-1s"}, "-grace -1s is negative"},
		{[]string{"-attempts", "-1"}, "invalid attempts"},
		{[]string{"-cap", "1ms"}, "invalid cap"},
		{[]string{"-on", "1", "-not-on", "2"}, "-on and -not-on conflict"},
		{[]string{"-quiet", "-json"}, "-quiet and -json conflict"},
		{[]string{"-policy", "constant 1s", "-delay", "2s"}, "-delay and -policy"},
		{[]string{"-policy", "constant 1s attempts 3", "-attempts", "2"}, "-attempts and -policy"},
		{[]string{"-policy", "exponential 1s cap 5s", "-cap", "2s"}, "-cap and -policy"},
		{[]string{"-policy", "constant 1s attempt-timeout 5s", "-attempt-timeout", "2s"}, "-attempt-timeout and -policy"},
		{[]string{"-on", "0"}, `-on: bad exit status "0"`},
		{[]string{"-not-on", "256"}, `-not-on: bad exit status "256"`},
		{[]string{"-on", "1,,2"}, `-on: bad exit status ""`},
		{[]string{"-until", "("}, "-until: error parsing regexp"},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			o := runRetry(t, nil, args(tc.flags, childCmd("count", file, "0"))...)
			require.Equal(t, 2, o.code, "stderr: %q", o.stderr)
			require.Zero(t, runs(t, file), "nothing runs")
			require.Len(t, o.stderr, 2, "stderr: %q", o.stderr)
			require.True(t, strings.HasPrefix(o.stderr[0], "retry: "), "stderr: %q", o.stderr)
			require.Contains(t, o.stderr[0], tc.want)
			require.Equal(t, "usage: retry [flags] -- command [args...] (retry -h lists the flags)", o.stderr[1])
		})
	}
	t.Run("no command", func(t *testing.T) {
		t.Parallel()
		o := runRetry(t, nil, "-attempts", "3", "--")
		require.Equal(t, 2, o.code)
		require.Equal(t, "retry: no command given", o.stderr[0])
	})
}

func TestWithoutDashDash(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	o := runRetry(t, nil, "-attempts", "3", "-delay", "1ms", self, "count", file, "1", "0")
	require.Equal(t, 0, o.code, "the first word that is not a flag starts the command; stderr: %q", o.stderr)
	require.Equal(t, 2, runs(t, file))
}

func TestHelp(t *testing.T) {
	t.Parallel()
	o := runRetry(t, nil, "-h")
	require.Equal(t, 0, o.code)
	require.Equal(t, "usage: retry [flags] -- command [args...]", o.stdout[0])
	newFlags().fs.VisitAll(func(f *flag.Flag) {
		found := slices.ContainsFunc(o.stdout, func(line string) bool {
			return line == "  -"+f.Name || strings.HasPrefix(line, "  -"+f.Name+" ")
		})
		require.True(t, found, "-h says nothing of -%s: %q", f.Name, o.stdout)
	})
}

func TestPipesClosedAfterGrace(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "runs")
	t.Cleanup(func() { // the process the command left behind
		if b, err := os.ReadFile(file + ".pid"); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	// The command's child holds the pipe of -until after the command has
	// ended: without the grace period, retry would wait for it forever.
	o := runRetry(t, nil, args([]string{"-until", "^ready$", "-grace", "200ms"}, childCmd("orphan", file))...)
	require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
	require.Equal(t, []string{"ready"}, o.stdout)
	b, err := os.ReadFile(file + ".pid")
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, 0), "what the command left behind is not killed")
}

func TestCommandVanishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, command := filepath.Join(dir, "runs"), filepath.Join(dir, "command")
	require.NoError(t, os.Symlink(self, command))
	o := runRetry(t, nil, "-attempts", "5", "-delay", "1ms", "--", command, "vanish", file, command)
	require.Equal(t, 127, o.code, "stderr: %q", o.stderr)
	require.Equal(t, 1, runs(t, file))
	require.Regexp(t, `^retry: not retried after 2 attempts in \S+: fork/exec .*: no such file or directory$`, last(o.stderr))
}

func TestCommandFoundThroughDot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(self, filepath.Join(dir, "retrykit-child")))
	file := filepath.Join(dir, "runs")
	cmd := exec.Command(binary, "-attempts", "2", "-delay", "1ms", "--", "retrykit-child", "count", file, "1", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH=.:"+os.Getenv("PATH")) // as a shell would, retry runs it
	o := start(t, nil, cmd).finish(t)
	require.Equal(t, 0, o.code, "stderr: %q", o.stderr)
	require.Equal(t, 2, runs(t, file))
}

func TestCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExecutable := filepath.Join(dir, "script")
	require.NoError(t, os.WriteFile(notExecutable, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	// Executable, but no program the system can start: only exec finds out.
	noProgram := filepath.Join(dir, "no-program")
	require.NoError(t, os.WriteFile(noProgram, []byte("exit 0\n"), 0o755))
	for _, tc := range []struct {
		command string
		status  int
		want    string
	}{
		{filepath.Join(dir, "missing"), 127, "no such file or directory"},
		{"retrykit-no-such-command", 127, "executable file not found in $PATH"},
		{notExecutable, 126, "permission denied"},
		{dir, 126, "is a directory"},
		{noProgram, 126, "exec format error"},
	} {
		t.Run(filepath.Base(tc.command), func(t *testing.T) {
			t.Parallel()
			o := runRetry(t, nil, "-attempts", "3", "-delay", "1ms", "--", tc.command)
			require.Equal(t, tc.status, o.code, "stderr: %q", o.stderr)
			require.Len(t, o.stderr, 1, "no attempt is made, or one that is not retried: %q", o.stderr)
			require.Contains(t, o.stderr[0], tc.want)
		})
	}
}
