package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

func runBump(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bump", stderr)
	root := fs.String("C", ".", "the repository's root")
	tidy := fs.Bool("tidy", true, "run go mod tidy (GOWORK=off) in every module whose go.mod changed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: bump takes one version, such as v0.2.0", errUsage)
	}
	version := fs.Arg(0)
	if semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.2.0", version)
	}
	changed, err := bump(*root, version)
	if err != nil {
		return err
	}
	for _, dir := range changed {
		fmt.Fprintf(stdout, "%s/go.mod: requirements on this repository's modules at %s\n", dir, version)
		if !*tidy {
			continue
		}
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir = filepath.Join(*root, filepath.FromSlash(dir))
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go mod tidy in %s: %v\n%s", dir, err, out)
		}
	}
	if len(changed) == 0 {
		fmt.Fprintf(stdout, "every requirement on this repository's modules is at %s already\n", version)
	}
	return nil
}

// bump sets every requirement that a module of the repository at root has
// on another of its modules to version, in every go.mod of the repository,
// and returns the folders whose go.mod it changed. A requirement on a
// sibling must come with a replace line pointing at its folder: without
// one, go mod tidy would fetch a version that is not tagged yet.
func bump(root, version string) ([]string, error) {
	dirs, err := moduleDirs(root)
	if err != nil {
		return nil, err
	}
	files := map[string]*modfile.File{}
	own := map[string]bool{}
	for _, dir := range dirs {
		f, err := readModFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		files[dir] = f
		own[f.Module.Mod.Path] = true
	}
	// Every go.mod is worked out before any is written, so that a bump that
	// fails changes none.
	edits := map[string][]byte{}
	var changed []string
	for _, dir := range dirs {
		data, err := bumpFile(dir, files[dir], own, version)
		if err != nil {
			return nil, err
		}
		if data != nil {
			edits[dir] = data
			changed = append(changed, dir)
		}
	}
	for _, dir := range changed {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"), edits[dir], 0o644); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// bumpFile returns the go.mod f of the module in dir with its requirements
// on the modules own at version, or nil when it needs no change.
func bumpFile(dir string, f *modfile.File, own map[string]bool, version string) ([]byte, error) {
	edited := false
	for _, req := range f.Require {
		p := req.Mod.Path
		if !own[p] || req.Mod.Version == version {
			continue
		}
		if !replacedByDir(f, p) {
			return nil, fmt.Errorf("%s/go.mod requires %s without a replace line to its folder", dir, p)
		}
		if err := f.AddRequire(p, version); err != nil {
			return nil, err
		}
		edited = true
	}
	if !edited {
		return nil, nil
	}
	f.Cleanup()
	return f.Format()
}

func replacedByDir(f *modfile.File, path string) bool {
	for _, r := range f.Replace {
		if r.Old.Path == path && r.New.Version == "" && modfile.IsDirectoryPath(r.New.Path) {
			return true
		}
	}
	return false
}

// moduleDirs returns the folder of every go.mod under root, slash-separated
// and relative to it, skipping what the go command skips: testdata and
// folders whose names start with a dot or an underscore.
func moduleDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || name != "go.mod" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dirs = append(dirs, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(dirs)
	return dirs, err
}
