package pgtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exampleDir is examples/sqltx, a module of its own in this repository. A
// test run from the module cache (go test all in a consumer) has no such
// folder beside it, so the test skips there and says why.
func exampleDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "examples", "sqltx")
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		t.Skipf("examples/sqltx is not beside this module (run from the repository, not the module cache): %v", err)
	}
	return dir
}

// goRun runs the example program with DATABASE_URL set to url ("": unset).
func goRun(t *testing.T, url string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = exampleDir(t)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestExampleProgram runs examples/sqltx against the cluster, and without
// a server.
func TestExampleProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program (-short)")
	}
	exampleDir(t)
	s := needServer(t)
	out, err := goRun(t, "")
	require.NoError(t, err, out)
	require.Equal(t, 1, strings.Count(out, "\n"), "without DATABASE_URL, one line: %q", out)
	require.Contains(t, out, "DATABASE_URL=")

	out, err = goRun(t, s.URL())
	require.NoError(t, err, out)
	t.Logf("go run ./examples/sqltx:\n%s", out)
	require.Contains(t, out, "20 transfers of 10 landed after")
	require.Contains(t, out, "total 200 (opening total 200)")
	require.Contains(t, out, "SQLSTATE 23505, returned at once")
}
