//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// pipeline runs "retry ARGS... | cat > FILE" in a shell, and returns what
// cat read, byte for byte, with the outcome of the shell (whose standard
// error is retry's, and whose exit status is cat's).
func pipeline(t *testing.T, retryArgs ...string) (downstream []byte, o outcome) {
	t.Helper()
	file, tmp := filepath.Join(t.TempDir(), "downstream"), t.TempDir()
	sh := exec.Command("sh", append([]string{"-c", `"$0" "$@" | cat > "$DOWNSTREAM"`, binary}, retryArgs...)...)
	sh.Env = append(os.Environ(), "DOWNSTREAM="+file, "TMPDIR="+tmp)
	o = start(t, nil, sh).finish(t)
	require.Equal(t, 0, o.code, "cat's status; stderr: %q", o.stderr)
	downstream, err := os.ReadFile(file)
	require.NoError(t, err)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "retry's temporary file outlived it")
	return downstream, o
}

// TestHoldPassesOnOneAttempt checks what the next stage of a pipeline
// reads with -hold: the output of the attempt that succeeded alone, or
// nothing. The other attempts' goes to standard error, each ending a line.
func TestHoldPassesOnOneAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		flags      []string
		outcomes   []string
		downstream string
		stderr     []string // retry's own lines as regexps, the command's as they are
	}{
		{"the second attempt succeeds", nil, []string{`18={"partial":`, `0:{"ok": true}`}, "{\"ok\": true}\n",
			[]string{`{"partial":`, `^retry: attempt 1: exit status 18; waiting 1ms `, `^retry: succeeded after 2 attempts in `}},
		{"every attempt fails", []string{"-attempts", "2"}, []string{`1=partial`, `1:line`}, "",
			[]string{`partial`, `^retry: attempt 1: exit status 1; `, `line`, `^retry: gave up after 2 attempts in \S+: exit status 1$`}},
		{"the first attempt succeeds", nil, []string{"0=no newline"}, "no newline", nil},
		{"-until matches the held output", []string{"-until", "^ready$"}, []string{"0:waiting", "0:ready"}, "ready\n",
			[]string{`waiting`, `^retry: attempt 1: exit status 0, no line matched -until; `, `^retry: succeeded after 2 attempts in `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "runs")
			flags := append([]string{"-hold", "-delay", "1ms"}, tc.flags...)
			downstream, o := pipeline(t, args(flags, childCmd("count", append([]string{file}, tc.outcomes...)...))...)
			require.Equal(t, tc.downstream, string(downstream), "stderr: %q", o.stderr)
			require.Len(t, o.stderr, len(tc.stderr), "stderr: %q", o.stderr)
			for i, want := range tc.stderr {
				if strings.HasPrefix(want, "^") {
					require.Regexp(t, want, o.stderr[i])
				} else {
					require.Equal(t, want, o.stderr[i])
				}
			}
		})
	}
}

// TestHoldBoundsMemory checks that -hold keeps a large output out of
// retry's memory, and passes on the successful attempt's, byte for byte.
func TestHoldBoundsMemory(t *testing.T) {
	t.Parallel()
	const size = 64 << 20            // per attempt
	const bound = size - (size >> 3) // what holding one attempt's output in memory would exceed
	file := filepath.Join(t.TempDir(), "runs")
	cmd := exec.Command(binary, args([]string{"-hold", "-delay", "1ms"}, childCmd("count", file, fmt.Sprint("1*", size), fmt.Sprint("0*", size)))...)
	setEnv(cmd)
	// Files, which retry writes itself: the test's race detector makes
	// reading pipes into a buffer slow.
	dir := t.TempDir()
	stdoutFile, stderrFile := filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	for name, to := range map[string]*io.Writer{stdoutFile: &cmd.Stdout, stderrFile: &cmd.Stderr} {
		f, err := os.Create(name)
		require.NoError(t, err)
		defer f.Close()
		*to = f
	}
	err := cmd.Run()
	stdout, readErr := os.ReadFile(stdoutFile)
	require.NoError(t, readErr)
	stderr, readErr := os.ReadFile(stderrFile)
	require.NoError(t, readErr)
	require.NoError(t, err, "stderr: %.500q", stderr[max(0, len(stderr)-500):])
	require.Len(t, stdout, size, "standard output")
	require.True(t, isBulk(stdout, 2), "standard output is not the second attempt's")
	require.Greater(t, len(stderr), size, "standard error")
	require.True(t, isBulk(stderr[:size], 1), "standard error does not start with the first attempt's output")
	require.Equal(t, 2, runs(t, file))
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		rss <<= 10 // kilobytes elsewhere
	}
	require.Less(t, rss, int64(bound), "retry's peak resident memory")
}

// TestHoldKeepsTheOrderOfSharedOutput checks that, with -hold, lines the
// command writes to standard output and standard error in turn reach a
// destination the two share (2>&1) in the order they were written: both
// are held.
func TestHoldKeepsTheOrderOfSharedOutput(t *testing.T) {
	t.Parallel()
	const n = 500
	file := filepath.Join(t.TempDir(), "runs")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command(binary, args([]string{"-hold"}, childCmd("interleave", file, fmt.Sprint(n)))...)
	setEnv(cmd)
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // after a failed test only
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "output %q", out)
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "out %d\nerr %d\n", i, i)
	}
	require.Equal(t, want.String(), string(out))
}

// TestHoldFailures checks the attempts whose output -hold cannot keep or
// pass on: they fail, with status 1 for a command that exited 0. One whose
// output could not be kept is retried. One that succeeded but whose output
// could not be passed on is not: part of it may have been.
func TestHoldFailures(t *testing.T) {
	t.Parallel()
	t.Run("cannot keep it", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		// No file grows past 8 blocks of 512 bytes, the temporary one included.
		sh := exec.Command("sh", args([]string{"-c", `ulimit -f 8 && exec "$0" "$@"`, binary, "-hold", "-attempts", "2", "-delay", "1ms"},
			childCmd("count", file, "0*100000"))...)
		o := start(t, nil, sh).finish(t)
		require.Equal(t, 1, o.code, "stderr: %.500q", o.stderr)
		require.Equal(t, 2, runs(t, file), "retried")
		require.Empty(t, o.stdout)
		require.Regexp(t, `^retry: gave up after 2 attempts in \S+: exit status 0, standard output lost: write \S+: file too large$`, last(o.stderr))
	})
	t.Run("cannot pass it on", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "runs")
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		defer full.Close()
		cmd := exec.Command(binary, args([]string{"-hold", "-attempts", "3", "-delay", "1ms"}, childCmd("count", file, "0:hello"))...)
		setEnv(cmd)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &stderr
		var exitErr *exec.ExitError
		require.ErrorAs(t, cmd.Run(), &exitErr)
		require.Equal(t, 1, exitErr.ExitCode(), "stderr: %q", stderr.String())
		require.Equal(t, 1, runs(t, file), "not retried")
		require.Regexp(t, `^retry: not retried after 1 attempt in \S+: exit status 0, standard output lost: .*no space left on device\n$`, stderr.String())
	})
}
