package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// siblings writes a repository whose modules require each other at
// v0.1.0: a and b with replace lines, as in development; testdata/t,
// which bump leaves alone; and b requires a module outside the repository.
func siblings(t *testing.T) string {
	t.Helper()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"go.mod": "module example.com/x\n\ngo 1.26.0\n",
		"x.go":   "package x\n\nfunc X() {}\n",
	})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":   "module example.com/r\n\ngo 1.26.0\n",
		"r.go":     "package r\n\nfunc R() {}\n",
		"a/go.mod": "module example.com/r/a\n\ngo 1.26.0\n\nrequire example.com/r v0.1.0\n\nreplace example.com/r => ../\n",
		"a/a.go":   "package a\n\nimport \"example.com/r\"\n\nfunc A() { r.R() }\n",
		"b/go.mod": "module example.com/r/b\n\ngo 1.26.0\n\nreplace (\n\texample.com/r => ..\n\texample.com/r/a => ../a\n)\n\n" +
			"require (\n\texample.com/r v0.1.0 // the core\n\texample.com/r/a v0.1.0\n\texample.com/x v1.2.3\n)\n\nreplace example.com/x => " + outside + "\n",
		"b/b.go":            "package b\n\nimport (\n\t\"example.com/r\"\n\t\"example.com/r/a\"\n\t\"example.com/x\"\n)\n\nfunc B() { r.R(); a.A(); x.X() }\n",
		"testdata/t/go.mod": "module example.com/r/t\n\ngo 1.26.0\n\nrequire example.com/r v0.1.0\n",
	})
	return dir
}

func requirements(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := readModFile(name)
	require.NoError(t, err)
	reqs := map[string]string{}
	for _, r := range f.Require {
		reqs[r.Mod.Path] = r.Mod.Version
	}
	return reqs
}

func TestBump(t *testing.T) {
	t.Setenv("GOPROXY", "off") // go mod tidy must need nothing from outside
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := siblings(t)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"bump", "-C", dir, "v0.2.0"}, &stdout, &stderr), "%s", &stderr)
	require.Equal(t, "a/go.mod: requirements on this repository's modules at v0.2.0\n"+
		"b/go.mod: requirements on this repository's modules at v0.2.0\n", stdout.String())

	require.Equal(t, map[string]string{"example.com/r": "v0.2.0"}, requirements(t, filepath.Join(dir, "a", "go.mod")))
	require.Equal(t, map[string]string{"example.com/r": "v0.2.0", "example.com/r/a": "v0.2.0", "example.com/x": "v1.2.3"},
		requirements(t, filepath.Join(dir, "b", "go.mod")))
	require.Equal(t, map[string]string{"example.com/r": "v0.1.0"}, requirements(t, filepath.Join(dir, "testdata", "t", "go.mod")))
	data, err := os.ReadFile(filepath.Join(dir, "b", "go.mod"))
	require.NoError(t, err)
	require.Contains(t, string(data), "example.com/r v0.2.0 // the core\n", "the comment stays")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"bump", "-C", dir, "v0.2.0"}, &stdout, &stderr), "%s", &stderr)
	require.Equal(t, "every requirement on this repository's modules is at v0.2.0 already\n", stdout.String())
}

func TestBumpErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, dir string)
		args []string
		code int
		want string
	}{
		{
			name: "no replace line",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"a/go.mod": "module example.com/r/a\n\ngo 1.26.0\n\nrequire example.com/r v0.1.0\n"})
			},
			args: []string{"v0.2.0"},
			code: 1,
			want: "a/go.mod requires example.com/r without a replace line to its folder",
		},
		{name: "not canonical", args: []string{"v0.2"}, code: 1, want: `version "v0.2" is not a canonical semantic version`},
		{name: "no version", args: nil, code: 2, want: "bump takes one version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := siblings(t)
			if tt.edit != nil {
				tt.edit(t, dir)
			}
			before, err := os.ReadFile(filepath.Join(dir, "b", "go.mod"))
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			require.Equal(t, tt.code, run(append([]string{"bump", "-C", dir, "-tidy=false"}, tt.args...), &stdout, &stderr))
			require.Contains(t, stderr.String(), tt.want)
			after, err := os.ReadFile(filepath.Join(dir, "b", "go.mod"))
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "a failed bump changes no go.mod")
		})
	}
}

func TestModuleDirs(t *testing.T) {
	dir := siblings(t)
	writeFiles(t, dir, map[string]string{".hidden/go.mod": "module h\n", "_skip/go.mod": "module s\n"})
	dirs, err := moduleDirs(dir)
	require.NoError(t, err)
	require.Equal(t, []string{".", "a", "b"}, dirs)
}
