package retrykit_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// wantExamples names examples each package must show, as go doc and
// pkg.go.dev attach them: Name for a function or type, Type_Method for a
// method, _suffix for the package itself.
var wantExamples = map[string][]string{
	"backoff":   {"Default", "Keyed", "NewKeyed", "Keyed_Forget", "Cap"},
	"policy":    {"Default", "Parse", "Policy_UnmarshalJSON", "Policy_MarshalText", "Policy_WithRandom", "Policy_WithResetRule", "NewGuard"},
	"retry":     {"Do", "DoValue", "DoValue_result", "Loop", "Go", "Permanent", "After", "WithHooks", "SlogHooks", "_attemptTimeout"},
	"retryhttp": {"New", "New_invalidPolicy", "WithRetryOptions"},
	"retrytest": {"Clock", "New", "Injector_Handler", "Injector_SetEnabled"},
	"retrysql":  {"Tx", "AmbiguousCommitError"},
	".":         {""}, // the package's own Example: the tour in one call
}

// TestExamples checks that every example of the packages users import is
// attached to the package or to one of its names, which is what makes go doc
// and pkg.go.dev show it, and that each such package has the examples of
// wantExamples.
func TestExamples(t *testing.T) {
	for _, dir := range []string{".", "backoff", "policy", "retry", "retryhttp", "retrytest", "retrysql", "retrygrpc"} {
		t.Run(dir, func(t *testing.T) {
			fset := token.NewFileSet()
			paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			var files, tests []*ast.File
			for _, path := range paths {
				f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
				if strings.HasSuffix(path, "_test.go") {
					tests = append(tests, f)
				}
			}
			pkg, err := doc.NewFromFiles(fset, files, "github.com/retrykit/retrykit/"+dir)
			if err != nil {
				t.Fatal(err)
			}
			shown := map[string]bool{}
			add := func(exs []*doc.Example) {
				for _, ex := range exs {
					shown[ex.Name] = true
				}
			}
			add(pkg.Examples)
			for _, f := range pkg.Funcs {
				add(f.Examples)
			}
			for _, typ := range pkg.Types {
				add(typ.Examples)
				for _, f := range typ.Funcs {
					add(f.Examples)
				}
				for _, m := range typ.Methods {
					add(m.Examples)
				}
			}
			for _, ex := range doc.Examples(tests...) {
				if !shown[ex.Name] {
					t.Errorf("Example%s is not attached to anything in package %s", ex.Name, pkg.Name)
				}
				if ex.Output == "" && !ex.EmptyOutput {
					t.Logf("Example%s has no // Output: and only compiles", ex.Name)
				}
			}
			for _, name := range wantExamples[dir] {
				if !shown[name] {
					t.Errorf("package %s shows no Example%s", pkg.Name, name)
				}
			}
			if len(shown) == 0 {
				t.Errorf("package %s shows no example", pkg.Name)
			}
		})
	}
}
