package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// libraryModules are the folders, relative to the repository's root, of the
// modules a user requires. Each is tagged and published at every release.
var libraryModules = []string{".", "retrygrpc", "retryotel", "retrykube", "retryriver", "retryvet"}

// unpublished are the module folders, as path.Match patterns, that are not
// released: the benchmarks, the peers, the examples, internal tools, and
// the tests that need modules the library code does not import (a
// PostgreSQL server for retrysql's and retryriver's, the OpenTelemetry SDK
// and gRPC for retryotel's).
var unpublished = []string{"bench", "retrygrpc/compare", "retrysql/pgtest", "retryotel/otelsuite", "retryriver/riversuite", "examples/*", "internal/*"}

// checkClassified fails when a module of the repository at root is neither
// a library module nor unpublished, so that a new module is not left out
// of a release by oversight.
func checkClassified(root string) error {
	dirs, err := moduleDirs(root)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		known := slices.Contains(libraryModules, dir)
		for _, pattern := range unpublished {
			if ok, _ := path.Match(pattern, dir); ok {
				known = true
			}
		}
		if !known {
			return fmt.Errorf("module folder %s is neither a library module nor unpublished: add it to libraryModules or unpublished in internal/release/modules.go", dir)
		}
	}
	return nil
}

// defaultVersion is the version the verbs publish and rehearse when told none.
const defaultVersion = "v0.1.0"

// A libModule is one library module of a checkout.
type libModule struct {
	dir  string // relative to the repository's root, slash-separated; "." for the root
	path string // the module path its go.mod declares
	file *modfile.File
}

// tagPrefix is what the module's tags start with: "" for the root module,
// "retrygrpc/" for the module in retrygrpc.
func (m libModule) tagPrefix() string {
	if m.dir == "." {
		return ""
	}
	return m.dir + "/"
}

// apiFile names the module's API file under api/: retrykit.txt for the
// root, retrysql-pgtest.txt for retrysql/pgtest.
func (m libModule) apiFile() string {
	if m.dir == "." {
		return path.Base(m.path) + ".txt"
	}
	return strings.ReplaceAll(m.dir, "/", "-") + ".txt"
}

// loadModules reads the go.mod of each folder in dirs under root.
func loadModules(root string, dirs []string) ([]libModule, error) {
	var mods []libModule
	for _, dir := range dirs {
		dir = path.Clean(filepath.ToSlash(dir))
		f, err := readModFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		mods = append(mods, libModule{dir: dir, path: f.Module.Mod.Path, file: f})
	}
	return mods, nil
}

func readModFile(name string) (*modfile.File, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	if f.Module == nil {
		return nil, fmt.Errorf("%s: no module line", name)
	}
	return f, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
