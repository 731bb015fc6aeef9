package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func runPublish(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("publish", stderr)
	root := fs.String("C", ".", "the repository's root")
	out := fs.String("o", "", "the module proxy `directory` to write into (GOPROXY=file://DIR)")
	version := fs.String("version", defaultVersion, "the `version` to publish every module at")
	modules := fs.String("modules", strings.Join(libraryModules, ","), "the module `folders` to publish, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 0 {
		return fmt.Errorf("%w: publish needs -o and no arguments", errUsage)
	}
	mods, err := loadModules(*root, splitList(*modules))
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := publish(*root, *out, m, *version, time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "published %s@%s from %s\n", m.path, *version, m.dir)
	}
	return nil
}

// publish writes module m of the checkout at root into the file-system
// module proxy proxyDir, at version: its go.mod as <version>.mod, its zip
// as <version>.zip, an <version>.info stamped with when, and the version
// added to the list.
func publish(root, proxyDir string, m libModule, version string, when time.Time) error {
	if semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.1.0", version)
	}
	if err := module.Check(m.path, version); err != nil {
		return err
	}
	escPath, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	var zbuf bytes.Buffer
	if err := createZip(&zbuf, root, m, version); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.dir), "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for ext, data := range map[string][]byte{".zip": zbuf.Bytes(), ".mod": gomod, ".info": info} {
		if err := os.WriteFile(filepath.Join(vdir, version+ext), data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(vdir, "list"), version)
}

// addToList adds version to a proxy's list file, keeping it sorted.
func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// createZip writes the zip of module m as the go command makes it from a
// tag of this repository. The files are the module folder's, as
// modzip.CreateFromDir picks them: nested modules, most of vendor/ and
// version-control folders stay out. A module in a subfolder without a
// LICENSE of its own gets the repository root's LICENSE, as the go
// command adds it (cmd/go/internal/modfetch, codeRepo.Zip).
func createZip(w io.Writer, root string, m libModule, version string) error {
	mv := module.Version{Path: m.path, Version: version}
	dir := filepath.Join(root, filepath.FromSlash(m.dir))
	var buf bytes.Buffer
	if err := modzip.CreateFromDir(&buf, mv, dir); err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if m.dir == "." || os.IsNotExist(err) {
		_, err := w.Write(buf.Bytes())
		return err
	}
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return err
	}
	prefix := mv.Path + "@" + mv.Version + "/"
	var files []modzip.File
	for _, zf := range zr.File {
		name := strings.TrimPrefix(zf.Name, prefix)
		if name == "LICENSE" {
			_, err := w.Write(buf.Bytes())
			return err
		}
		files = append(files, zipEntry{name: name, f: zf})
	}
	files = append(files, dataFile{name: "LICENSE", data: license})
	return modzip.Create(w, mv, files)
}

// zipEntry is a file of a zip already made, under its name in the module.
type zipEntry struct {
	name string
	f    *zip.File
}

func (e zipEntry) Path() string                 { return e.name }
func (e zipEntry) Lstat() (os.FileInfo, error)  { return e.f.FileInfo(), nil }
func (e zipEntry) Open() (io.ReadCloser, error) { return e.f.Open() }

// dataFile is a file held in memory.
type dataFile struct {
	name string
	data []byte
}

func (f dataFile) Path() string                 { return f.name }
func (f dataFile) Lstat() (os.FileInfo, error)  { return dataInfo(f), nil }
func (f dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type dataInfo dataFile

func (i dataInfo) Name() string       { return filepath.Base(i.name) }
func (i dataInfo) Size() int64        { return int64(len(i.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
