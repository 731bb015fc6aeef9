package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// commandTimeout bounds each go command and consumer program of a rehearsal.
const commandTimeout = 5 * time.Minute

func runRehearse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rehearse", stderr)
	root := fs.String("C", ".", "the repository's root")
	version := fs.String("version", defaultVersion, "the `version` to publish and fetch")
	modules := fs.String("modules", strings.Join(libraryModules, ","), "the module `folders` to publish, comma-separated")
	consumers := fs.String("consumers", filepath.Join("internal", "release", "testdata", "consumer"),
		"the `folder` of the consumer programs, one folder each: root, or the module folder's last element")
	keep := fs.Bool("keep", false, "keep the proxy and the consumer modules, and say where")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: rehearse takes no arguments", errUsage)
	}
	if !flagSet(fs, "modules") {
		if err := checkClassified(*root); err != nil {
			return err
		}
	}
	consumerDir, err := filepath.Abs(*consumers)
	if err != nil {
		return err
	}
	mods, err := loadModules(*root, splitList(*modules))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "retrykit-rehearsal-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(stdout, "kept in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	r, err := newRehearsal(tmp, mods, *version, stdout)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := publish(*root, r.proxy, m, *version, time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "published %s@%s from %s into %s\n", m.path, *version, m.dir, r.proxy)
	}
	return r.runAll(consumerDir)
}

// A rehearsal fetches each published module into a consumer module of its
// own, outside the repository, as a user's first `go get` does.
type rehearsal struct {
	tmp     string
	proxy   string // the file-system module proxy the modules are published into
	version string
	mods    []libModule
	env     []string
	out     io.Writer
}

// newRehearsal sets up the go command's environment for the consumers:
// no go.work; the published modules first, then the module cache the
// machine already has (a proxy too, so nothing is fetched twice), then
// the machine's own GOPROXY; the checksum database for every module except
// the published ones, which it cannot know; a module cache of its own, so
// that no earlier rehearsal's v0.1.0 stands in for this one's; and the
// local toolchain only.
func newRehearsal(tmp string, mods []libModule, version string, out io.Writer) (*rehearsal, error) {
	goenv, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE", "GONOSUMDB").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSuffix(string(goenv), "\n"), "\n")
	if len(vals) != 3 {
		return nil, fmt.Errorf("go env printed %q", goenv)
	}
	baseProxy, cache, nosumdb := vals[0], vals[1], vals[2]
	r := &rehearsal{tmp: tmp, proxy: filepath.Join(tmp, "proxy"), version: version, mods: mods, out: out}
	proxies := []string{fileURL(r.proxy), fileURL(filepath.Join(cache, "cache", "download"))}
	if baseProxy != "" && baseProxy != "off" {
		proxies = append(proxies, baseProxy)
	}
	var own []string
	for _, m := range mods {
		own = append(own, m.path)
	}
	if nosumdb != "" {
		own = append(own, nosumdb)
	}
	r.env = append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY="+strings.Join(proxies, ","),
		"GONOSUMDB="+strings.Join(own, ","),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOTOOLCHAIN=local",
	)
	fmt.Fprintf(out, "consumer environment:\n\tGOWORK=off\n\tGOFLAGS=-mod=mod -modcacherw\n\tGOPROXY=%s\n\tGONOSUMDB=%s\n\tGOMODCACHE=%s\n\tGOTOOLCHAIN=local\n",
		strings.Join(proxies, ","), strings.Join(own, ","), filepath.Join(tmp, "modcache"))
	return r, nil
}

func fileURL(dir string) string {
	return "file://" + filepath.ToSlash(dir)
}

// runAll runs the consumer of each module that has one, and fails when any
// of them fails.
func (r *rehearsal) runAll(consumerDir string) error {
	var failed []string
	ran := 0
	for _, m := range r.mods {
		dir := filepath.Join(consumerDir, consumerName(m))
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(r.out, "\n-- %s: no consumer program in %s; published for the others only\n", m.path, dir)
			continue
		}
		ran++
		fmt.Fprintf(r.out, "\n-- %s@%s alone, in a consumer module of its own\n", m.path, r.version)
		if err := r.consume(m, dir); err != nil {
			fmt.Fprintf(r.out, "FAIL %s: %v\n", m.path, err)
			failed = append(failed, m.path)
			continue
		}
		fmt.Fprintf(r.out, "ok   %s: got, tidied, vetted, built and ran\n", m.path)
	}
	if ran == 0 {
		return fmt.Errorf("no consumer program found in %s", consumerDir)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d consumers failed: %s", len(failed), ran, strings.Join(failed, ", "))
	}
	fmt.Fprintf(r.out, "\nthe release rehearsal passed: %d consumers\n", ran)
	return nil
}

// consumerName is the folder of a module's consumer program: root for the
// root module, else the module folder's last element.
func consumerName(m libModule) string {
	if m.dir == "." {
		return "root"
	}
	return path.Base(m.dir)
}

// consume gets module m alone into a fresh consumer module made of the
// files of src, tidies, vets and builds it, runs the program and its
// tests, and checks that every module of this repository in its build
// list is the published version, not a replacement, and that its module
// graph holds no module that only m's tests need.
func (r *rehearsal) consume(m libModule, src string) error {
	dir := filepath.Join(r.tmp, "consumer-"+consumerName(m))
	if err := copyFiles(src, dir); err != nil {
		return err
	}
	steps := [][]string{
		{"go", "mod", "init", "example.com/consumer/" + consumerName(m)},
		{"go", "get", m.path + "@" + r.version},
		{"go", "mod", "tidy"},
		{"go", "vet", "./..."},
		{"go", "build", "-o", filepath.Join(r.tmp, "bin", consumerName(m)), "."},
		{filepath.Join(r.tmp, "bin", consumerName(m))},
	}
	if tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go")); len(tests) > 0 {
		steps = append(steps, []string{"go", "test", "-count=1", "./..."})
	}
	for i, step := range steps {
		if _, err := r.command(dir, step...); err != nil {
			return err
		}
		if i == 2 { // after tidy
			if err := r.checkBuildList(dir, m); err != nil {
				return err
			}
			if err := r.checkGraph(dir, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBuildList fails unless m, and every other module of this
// repository that the consumer needs, is the published version.
func (r *rehearsal) checkBuildList(dir string, m libModule) error {
	out, err := r.quiet(dir, "go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{with .Replace}}replaced{{end}}", "all")
	if err != nil {
		return err
	}
	return buildListProblem(string(out), r.mods, m, r.version)
}

// buildListProblem reads the lines "path version [replaced]" of a build
// list and returns an error unless m is in it, and each of mods in it is
// at version and not replaced.
func buildListProblem(list string, mods []libModule, m libModule, version string) error {
	found := false
	for line := range strings.Lines(list) {
		f := strings.Fields(line)
		if len(f) < 2 || !slices.ContainsFunc(mods, func(x libModule) bool { return x.path == f[0] }) {
			continue
		}
		if f[1] != version || len(f) > 2 {
			return fmt.Errorf("the consumer builds %s, not %s@%s", strings.TrimSpace(line), f[0], version)
		}
		found = found || f[0] == m.path
	}
	if !found {
		return fmt.Errorf("%s@%s is not in the consumer's build list after go mod tidy", m.path, version)
	}
	return nil
}

// command runs one step in dir, shows it and its output, and returns the
// output.
func (r *rehearsal) command(dir string, args ...string) ([]byte, error) {
	return r.exec(dir, true, args)
}

// quiet runs one step in dir and shows it, its output only if it fails.
func (r *rehearsal) quiet(dir string, args ...string) ([]byte, error) {
	return r.exec(dir, false, args)
}

func (r *rehearsal) exec(dir string, show bool, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	shown := strings.Join(args, " ")
	if rel, err := filepath.Rel(r.tmp, args[0]); err == nil && !strings.HasPrefix(rel, "..") {
		shown = "./" + filepath.Base(args[0]) // the consumer's program
	}
	fmt.Fprintf(r.out, "$ %s\n", shown)
	err := cmd.Run()
	if out.Len() > 0 && (show || err != nil) {
		fmt.Fprintf(r.out, "\t%s\n", strings.ReplaceAll(strings.TrimRight(out.String(), "\n"), "\n", "\n\t"))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", shown, err)
	}
	return out.Bytes(), nil
}

// copyFiles copies the regular files of src, not its folders, into dst.
func copyFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
