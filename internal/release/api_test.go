package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// apimodAPI is the API of testdata/apimod: one declaration of each kind,
// without its test file, its internal package and its command.
var apimodAPI = []string{
	"pkg apimod, const Limit untyped int = 3",
	"pkg apimod, const Second Duration = 1000",
	"pkg apimod, func Do(context.Context, string, ...Option) (int, error)",
	"pkg apimod, func Map[T any, U comparable]([]T, func(T) U) map[U]T",
	"pkg apimod, method (*Config) Apply(...Option) error",
	"pkg apimod, method (*Set[K]) Add(K)",
	"pkg apimod, method (Duration) String() string",
	"pkg apimod, type Alias = Config",
	"pkg apimod, type Config struct",
	"pkg apimod, type Config struct, Hook func(context.Context, int) error",
	"pkg apimod, type Config struct, Name string",
	"pkg apimod, type Config struct, Timeout time.Duration",
	"pkg apimod, type Config struct, embedded io.Reader",
	"pkg apimod, type Duration int64",
	"pkg apimod, type Number interface { ~int | ~int64 | float64 }",
	"pkg apimod, type Option func(*Config)",
	"pkg apimod, type Sealed interface { Kind, unexported methods }",
	"pkg apimod, type Sealed interface, Kind() string",
	"pkg apimod, type Set[K comparable] struct",
	"pkg apimod, type Source interface { Close, Next }",
	"pkg apimod, type Source interface, Close() error",
	"pkg apimod, type Source interface, Next(context.Context) (<-chan int, error)",
	"pkg apimod, var ErrGone error",
	"pkg apimod, var Pair struct{ A int; B int }",
	"pkg sub, func New() *apimod.Config",
}

func TestAPIOf(t *testing.T) {
	mods, err := loadModules("testdata/apimod", []string{"."})
	require.NoError(t, err)
	apis, err := apiOf("testdata/apimod", "example.com/apimod", mods[0])
	require.NoError(t, err)
	require.Equal(t, strings.Join(apimodAPI, "\n")+"\n", apiText(apis))

	require.Len(t, apis, 2)
	require.Equal(t, "apimod", apis[0].rel)
	// 14 top-level names and 3 methods; interface methods are not counted.
	require.Len(t, apis[0].names, 17)
}

// A nested module's API holds the root's internal packages that it imports,
// which later releases of the root must keep; the root's own API leaves
// them out.
func TestAPIOfNestedHoldsTheRootsInternals(t *testing.T) {
	mods, err := loadModules("testdata/apimod", []string{"nested"})
	require.NoError(t, err)
	apis, err := apiOf("testdata/apimod", "example.com/apimod", mods[0])
	require.NoError(t, err)
	require.Equal(t, "pkg internal/hidden, func Visible()\npkg nested, func Run()\n", apiText(apis))
}

func TestAPICheck(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		old, new string
		diff     []string
	}{
		{
			name: "changed signature",
			file: "apimod.go",
			old:  "func Do(ctx context.Context, name string, opts ...Option) (int, error)",
			new:  "func Do(ctx context.Context, name []byte, opts ...Option) (int, error)",
			diff: []string{
				"-pkg apimod, func Do(context.Context, string, ...Option) (int, error)",
				"+pkg apimod, func Do(context.Context, []byte, ...Option) (int, error)",
			},
		},
		{
			name: "new function",
			file: "sub/sub.go",
			old:  "func New() *apimod.Config { return nil }",
			new:  "func New() *apimod.Config { return nil }\n\nfunc Old() {}",
			diff: []string{"+pkg sub, func Old()"},
		},
		{
			name: "removed method",
			file: "apimod.go",
			old:  "func (d Duration) String() string { return \"\" }",
			new:  "",
			diff: []string{"-pkg apimod, method (Duration) String() string"},
		},
		{
			name: "renamed field",
			file: "apimod.go",
			old:  "\tName    string",
			new:  "\tTitle   string",
			diff: []string{
				"-pkg apimod, type Config struct, Name string",
				"+pkg apimod, type Config struct, Title string",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTree(t, "testdata/apimod")
			var stdout, stderr bytes.Buffer
			require.Equal(t, 0, run([]string{"api", "-C", dir, "-modules", "."}, &stdout, &stderr), "%s", &stderr)
			require.Equal(t, 0, run([]string{"api", "-C", dir, "-modules", ".", "-check"}, &stdout, &stderr), "%s", &stderr)

			editFile(t, filepath.Join(dir, tt.file), tt.old, tt.new)
			stderr.Reset()
			require.Equal(t, 1, run([]string{"api", "-C", dir, "-modules", ".", "-check"}, &stdout, &stderr))
			msg := stderr.String()
			require.Contains(t, msg, "api/apimod.txt differs from the API of the tree")
			for _, line := range tt.diff {
				require.Contains(t, msg, "\t"+line+"\n")
			}
			require.Equal(t, len(tt.diff), strings.Count(msg, "\tpkg ")+strings.Count(msg, "\t-pkg ")+strings.Count(msg, "\t+pkg "),
				"the diff has other lines:\n%s", msg)
			require.Contains(t, msg, regenerate)

			require.Equal(t, 0, run([]string{"api", "-C", dir, "-modules", "."}, &stdout, &stderr), "%s", &stderr)
			require.Equal(t, 0, run([]string{"api", "-C", dir, "-modules", ".", "-check"}, &stdout, &stderr), "%s", &stderr)
		})
	}
}

func TestAPICheckMissingFile(t *testing.T) {
	dir := copyTree(t, "testdata/apimod")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"api", "-C", dir, "-modules", ".", "-check"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "api/apimod.txt is missing")
	require.Contains(t, stderr.String(), "\t+pkg sub, func New() *apimod.Config\n")
}

func TestCheckBudget(t *testing.T) {
	names := func(n int) []string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("N%d", i))
		}
		return s
	}
	core := func(counts ...int) []pkgAPI {
		var apis []pkgAPI
		for i, n := range counts {
			apis = append(apis, pkgAPI{rel: corePackages[i], names: names(n)})
		}
		return append(apis, pkgAPI{rel: "retrysql", names: names(1000)}) // not in the budget
	}
	tests := []struct {
		name    string
		apis    []pkgAPI
		problem string
	}{
		{"at the budget", core(30, 50, 30, 14, 6), ""},
		{"one over", core(30, 50, 30, 14, 7), "131 names in backoff, policy, retry, retryhttp, retrytest, more than 130"},
		{"one over in another package", core(31, 50, 30, 14, 6), "131 names in backoff, policy, retry, retryhttp, retrytest, more than 130"},
		{"a package missing", core(30, 50, 30, 14), "package retrytest is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			problem := checkBudget(tt.apis, &stdout)
			if tt.problem == "" {
				require.Empty(t, problem)
				require.Contains(t, stdout.String(), ": 130 (budget 130;")
				require.NotContains(t, stdout.String(), "listed", "no name is set apart from the budget")
				return
			}
			require.Contains(t, problem, tt.problem)
		})
	}
}

func TestDiffLines(t *testing.T) {
	tests := []struct {
		old, new, want []string
	}{
		{nil, nil, nil},
		{[]string{"a", "b"}, []string{"a", "b"}, nil},
		{[]string{"a", "c"}, []string{"b", "c", "d"}, []string{"-a", "+b", "+d"}},
		{[]string{"b", "a"}, nil, []string{"-a", "-b"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, diffLines(tt.old, tt.new), "diffLines(%q, %q)", tt.old, tt.new)
	}
}
