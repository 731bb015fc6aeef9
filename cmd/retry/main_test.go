//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// childEnv, set to 1, makes this test binary the test command (see child).
const childEnv = "RETRYKIT_RETRY_TEST_CHILD"

var (
	binary string // the retry command, built by TestMain
	self   string // this test binary, which retry runs as the test command
)

// TestMain builds the retry command once for every test, with the race
// detector when the tests have it, or acts as the test command when
// childEnv says so.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child(os.Args[1:]))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "retry-command-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "retry")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	if self, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// proc is a running retry command.
type proc struct {
	cmd            *exec.Cmd
	begin          time.Time
	stdout, stderr <-chan string
	out, errOut    []string // the lines read so far
}

// outcome is how a retry command ended.
type outcome struct {
	code           int
	stdout, stderr []string // lines
	took           time.Duration
}

// startRetry starts the retry command with args, and stdin as its input
// (nil for none). The command to retry is this test binary: give it as
// child(…).
func startRetry(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	return start(t, stdin, exec.Command(binary, args...))
}

// start starts cmd, which runs the retry command, with stdin as its input,
// adding to cmd's environment (os.Environ() if it has none) what the
// tests need.
func start(t *testing.T, stdin io.Reader, cmd *exec.Cmd) *proc {
	t.Helper()
	setEnv(cmd)
	cmd.Stdin = stdin
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	p := &proc{cmd: cmd, begin: time.Now(), stdout: lines(stdout), stderr: lines(stderr)}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // after a failed test only: finish has reaped it otherwise
	return p
}

// setEnv adds to cmd's environment (os.Environ() if it has none) what the
// tests need.
func setEnv(cmd *exec.Cmd) {
	// A program built with the race detector sleeps a second as it exits,
	// unless GORACE says otherwise: retry and the test command both are.
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, childEnv+"=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// lines sends the lines read from r, and closes the channel at its end.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 1000)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// waitFor reads lines from ch into *seen until one contains want.
func waitFor(t *testing.T, ch <-chan string, seen *[]string, want string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case line, ok := <-ch:
			require.True(t, ok, "the output ended without %q: %q", want, *seen)
			*seen = append(*seen, line)
			if strings.Contains(line, want) {
				return
			}
		case <-deadline:
			require.Failf(t, "no such line", "no line with %q in a minute: %q", want, *seen)
		}
	}
}

// finish reads the rest of the output and waits for the command to end,
// for a minute at most.
func (p *proc) finish(t *testing.T) outcome {
	t.Helper()
	timeout := time.After(time.Minute)
	for p.stdout != nil || p.stderr != nil {
		select {
		case line, ok := <-p.stdout:
			if !ok {
				p.stdout = nil
				continue
			}
			p.out = append(p.out, line)
		case line, ok := <-p.stderr:
			if !ok {
				p.stderr = nil
				continue
			}
			p.errOut = append(p.errOut, line)
		case <-timeout:
			require.Failf(t, "retry did not end", "not in a minute: stdout %q, stderr %q", p.out, p.errOut)
		}
	}
	err := p.cmd.Wait()
	o := outcome{code: p.cmd.ProcessState.ExitCode(), stdout: p.out, stderr: p.errOut, took: time.Since(p.begin)}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		require.NoError(t, err)
	}
	for _, line := range o.stderr {
		require.NotContains(t, line, "DATA RACE", "the retry command has a data race: %q", o.stderr)
	}
	return o
}

// runRetry runs the retry command with args to its end.
func runRetry(t *testing.T, stdin io.Reader, args ...string) outcome {
	t.Helper()
	return startRetry(t, stdin, args...).finish(t)
}

// child returns the arguments that make retry run this test binary as the
// test command in mode (see child).
func childCmd(mode string, args ...string) []string {
	return append([]string{"--", self, mode}, args...)
}

// args joins flags and a command line.
func args(flags []string, command []string) []string {
	return append(append([]string{}, flags...), command...)
}

// runs returns how many attempts of the test command wrote to file.
func runs(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// last returns the last of lines, "" if there are none.
func last(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}
