package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyTree copies the folder src into a new folder under the test's
// temporary directory and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	require.NoError(t, err)
	return dst
}

// writeFiles writes files, named by slash-separated paths relative to dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// editFile replaces old, which must be there, with new in the file name.
func editFile(t *testing.T, name, old, new string) {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "%s", name)
	require.NoError(t, os.WriteFile(name, []byte(replaceOnce(string(data), old, new)), 0o644))
}

func replaceOnce(s, old, new string) string {
	i := strings.Index(s, old)
	return s[:i] + new + s[i+len(old):]
}
