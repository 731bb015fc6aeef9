// Command retryvet uses the retryvet module as a user does after
// `go get github.com/retrykit/retrykit/retryvet`: its analyzers, run by
// x/tools' checker over this very package, report each mistake that
// seeded.go makes, on the line that says so, and nothing else.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/retrykit/retrykit/retryvet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadSyntax}, ".")
	if err != nil {
		return err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return fmt.Errorf("the package does not load")
	}
	graph, err := checker.Analyze(retryvet.Analyzers(), pkgs, nil)
	if err != nil {
		return err
	}
	got := map[string]bool{} // "file:line check"
	for act := range graph.All() {
		if act.Err != nil {
			return fmt.Errorf("%s: %v", act, act.Err)
		}
		for _, d := range act.Diagnostics {
			pos := act.Package.Fset.Position(d.Pos)
			fmt.Printf("retryvet: %s:%d: %s: %s\n", baseName(pos.Filename), pos.Line, act.Analyzer.Name, d.Message)
			got[fmt.Sprintf("%s:%d %s", baseName(pos.Filename), pos.Line, act.Analyzer.Name)] = true
		}
	}
	want, err := seeded("seeded.go")
	if err != nil {
		return err
	}
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(want)) {
		return fmt.Errorf("retryvet reported %v, want %v", keys(got), keys(want))
	}
	fmt.Printf("retryvet: each of the %d seeded mistakes reported at its line, nothing else\n", len(want))
	return nil
}

// seeded returns the lines of name that end in a comment "// retryvet:
// CHECK", as "file:line CHECK".
func seeded(name string) (map[string]bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if _, check, ok := strings.Cut(sc.Text(), "// retryvet: "); ok {
			want[fmt.Sprintf("%s:%d %s", name, line, strings.TrimSpace(check))] = true
		}
	}
	return want, sc.Err()
}

func baseName(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
