package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// retrykitPath is the root module's path. The budget below applies to it.
const retrykitPath = "github.com/retrykit/retrykit"

// corePackages are the root module's packages whose exported names share
// one budget: nameBudget top-level exported names and exported methods.
var corePackages = []string{"backoff", "policy", "retry", "retryhttp", "retrytest"}

const nameBudget = 130

// regenerate is the one command that rewrites every API file from the tree.
const regenerate = "go run ./internal/release api"

func runAPI(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("api", stderr)
	root := fs.String("C", ".", "the repository's root")
	check := fs.Bool("check", false, "compare the tree's API with api/*.txt instead of writing them")
	modules := fs.String("modules", strings.Join(libraryModules, ","), "the module `folders` whose API to write, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: api takes no arguments", errUsage)
	}
	rootMod, err := loadModules(*root, []string{"."})
	if err != nil {
		return err
	}
	mods, err := loadModules(*root, splitList(*modules))
	if err != nil {
		return err
	}
	var problems []string
	for _, m := range mods {
		apis, err := apiOf(*root, rootMod[0].path, m)
		if err != nil {
			return err
		}
		if m.dir == "." && m.path == retrykitPath {
			if p := checkBudget(apis, stdout); p != "" {
				problems = append(problems, p)
			}
		}
		name := filepath.Join(*root, "api", m.apiFile())
		if *check {
			if p := compareAPI(name, "api/"+m.apiFile(), apiText(apis)); p != "" {
				problems = append(problems, p)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, []byte(apiText(apis)), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote api/%s (%s)\n", m.apiFile(), m.path)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	if *check {
		fmt.Fprintf(stdout, "the API of %d modules matches api/*.txt\n", len(mods))
	}
	return nil
}

// apiText is the content of one module's API file.
func apiText(apis []pkgAPI) string {
	var lines []string
	for _, a := range apis {
		lines = append(lines, a.lines...)
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// checkBudget prints the exported names of the core packages and returns
// a problem when they are over the budget or a core package is missing.
// Every exported name and method counts: none is set apart.
func checkBudget(apis []pkgAPI, stdout io.Writer) string {
	total := 0
	var counts []string
	for _, pkg := range corePackages {
		i := slices.IndexFunc(apis, func(a pkgAPI) bool { return a.rel == pkg })
		if i < 0 {
			return fmt.Sprintf("exported-name budget: package %s is missing from the root module", pkg)
		}
		n := len(apis[i].names)
		total += n
		counts = append(counts, fmt.Sprintf("%s %d", pkg, n))
	}
	fmt.Fprintf(stdout, "exported names in %s: %d (budget %d; %s)\n",
		strings.Join(corePackages, ", "), total, nameBudget, strings.Join(counts, ", "))
	if total > nameBudget {
		return fmt.Sprintf("exported-name budget: %d names in %s, more than %d",
			total, strings.Join(corePackages, ", "), nameBudget)
	}
	return ""
}

// compareAPI returns a readable diff when the API file name (shown as
// shown) differs from want, and "" when they match.
func compareAPI(name, shown, want string) string {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err.Error()
	}
	if string(data) == want {
		return ""
	}
	var b strings.Builder
	if os.IsNotExist(err) {
		fmt.Fprintf(&b, "%s is missing.\n", shown)
	} else {
		fmt.Fprintf(&b, "%s differs from the API of the tree (- only in the file, + only in the tree):\n", shown)
	}
	for _, line := range diffLines(splitLines(string(data)), splitLines(want)) {
		fmt.Fprintf(&b, "\t%s\n", line)
	}
	fmt.Fprintf(&b, "If the change is meant, regenerate the API files and commit them with it:\n\t%s", regenerate)
	return b.String()
}

func splitLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// diffLines merges two sorted sets of lines: a line only in old gets "-",
// a line only in new gets "+", a line in both is left out.
func diffLines(old, new []string) []string {
	old, new = slices.Sorted(slices.Values(old)), slices.Sorted(slices.Values(new))
	var out []string
	for len(old) > 0 || len(new) > 0 {
		switch {
		case len(new) == 0 || len(old) > 0 && old[0] < new[0]:
			out = append(out, "-"+old[0])
			old = old[1:]
		case len(old) == 0 || new[0] < old[0]:
			out = append(out, "+"+new[0])
			new = new[1:]
		default:
			old, new = old[1:], new[1:]
		}
	}
	return out
}
