package main

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/mod/semver"
)

func runTags(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tags", stderr)
	root := fs.String("C", ".", "the repository's root")
	modules := fs.String("modules", strings.Join(libraryModules, ","), "the module `folders` to tag, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: tags takes one version, such as v0.1.0", errUsage)
	}
	version := fs.Arg(0)
	if semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.1.0", version)
	}
	mods, err := loadModules(*root, splitList(*modules))
	if err != nil {
		return err
	}
	ordered, err := dependenciesFirst(mods)
	if err != nil {
		return err
	}
	for _, m := range ordered {
		fmt.Fprintln(stdout, m.tagPrefix()+version)
	}
	return nil
}

// dependenciesFirst orders mods so that each comes after the modules of
// mods it requires, and otherwise keeps their order. A tag pushed in that
// order never names a module whose requirements are not tagged yet.
func dependenciesFirst(mods []libModule) ([]libModule, error) {
	byPath := map[string]bool{}
	for _, m := range mods {
		byPath[m.path] = true
	}
	done := map[string]bool{}
	var ordered []libModule
	for len(ordered) < len(mods) {
		progress := false
		for _, m := range mods {
			if done[m.path] || !requirementsDone(m, byPath, done) {
				continue
			}
			done[m.path] = true
			ordered = append(ordered, m)
			progress = true
		}
		if !progress {
			return nil, fmt.Errorf("the modules require each other in a cycle")
		}
	}
	return ordered, nil
}

func requirementsDone(m libModule, own, done map[string]bool) bool {
	for _, r := range m.file.Require {
		if own[r.Mod.Path] && !done[r.Mod.Path] {
			return false
		}
	}
	return true
}
