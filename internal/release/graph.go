package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// testModules are the modules a released module may require for its tests
// alone: a user's build may carry them, and what they require.
var testModules = []string{"github.com/stretchr/testify", "go.uber.org/goleak"}

// checkGraph fails when the consumer's module graph holds a module that
// only the tests of m can need: one that m requires, that no package of m
// outside its tests imports, directly or not, and that nothing else in the
// graph requires.
func (r *rehearsal) checkGraph(dir string, m libModule) error {
	graph, err := r.quiet(dir, "go", "mod", "graph")
	if err != nil {
		return err
	}
	deps, err := r.quiet(dir, "go", "list", "-mod=readonly", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", m.path+"/...")
	if err != nil {
		return err
	}
	// The graph leaves out the requirements of a module that the build
	// needs no package of, testify's among them: read those of the test
	// modules from their go.mod files.
	testEdges, err := r.testModuleEdges(dir, string(graph))
	if err != nil {
		return err
	}
	extra := testOnlyModules(string(graph)+testEdges, m.path, strings.Fields(string(deps)))
	if len(extra) > 0 {
		return fmt.Errorf("the consumer's module graph holds %s, which only the tests of %s need: move those tests to a module that is not released",
			strings.Join(extra, ", "), m.path)
	}
	fmt.Fprintf(r.out, "\tno module in the graph that only the tests of %s need\n", m.path)
	return nil
}

// testModuleEdges returns, as lines of go mod graph, the requirements of
// the test modules in graph and of the modules they require, read from
// their go.mod files.
func (r *rehearsal) testModuleEdges(dir, graph string) (string, error) {
	var queue []string
	for line := range strings.Lines(graph) {
		for _, n := range strings.Fields(line) {
			if slices.Contains(testModules, modulePath(n)) && strings.Contains(n, "@") && !slices.Contains(queue, n) {
				queue = append(queue, n)
			}
		}
	}
	var b strings.Builder
	seen := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		out, err := r.quiet(dir, "go", "mod", "download", "-json", n)
		if err != nil {
			return "", err
		}
		var info struct{ GoMod string }
		if err := json.Unmarshal(out, &info); err != nil {
			return "", fmt.Errorf("go mod download -json %s: %v", n, err)
		}
		f, err := readModFile(info.GoMod)
		if err != nil {
			return "", err
		}
		for _, req := range f.Require {
			to := req.Mod.Path + "@" + req.Mod.Version
			fmt.Fprintf(&b, "%s %s\n", n, to)
			queue = append(queue, to)
		}
	}
	return b.String(), nil
}

// testOnlyModules reads graph, lines of go mod graph ("from to", the main
// module without a version), and returns, sorted, the paths of the modules
// that the main module reaches only through a requirement of module m on
// a module outside lib (the modules that provide the packages m's non-test
// packages import) and outside testModules. A module is reached when any
// of its versions is. The go and toolchain nodes are left out.
func testOnlyModules(graph, m string, lib []string) []string {
	edges := map[string][]string{}
	nodes := map[string]bool{}
	main := ""
	for line := range strings.Lines(graph) {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if !strings.Contains(f[0], "@") {
			main = f[0]
		}
		from, to := modulePath(f[0]), modulePath(f[1])
		if to == "go" || to == "toolchain" {
			continue
		}
		nodes[to] = true
		if from == m && !slices.Contains(lib, to) && !slices.Contains(testModules, to) {
			continue
		}
		edges[from] = append(edges[from], to)
	}
	seen := map[string]bool{main: true}
	queue := []string{main}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, to := range edges[n] {
			if !seen[to] {
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	var extra []string
	for n := range nodes {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	return extra
}

// modulePath is the path of a node of go mod graph: path@version, or the
// main module's path alone.
func modulePath(node string) string {
	p, _, _ := strings.Cut(node, "@")
	return p
}
