package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTags(t *testing.T) {
	tests := []struct {
		name    string
		modules string
		want    string
	}{
		{"in order", ".,a,b", "v0.2.0\na/v0.2.0\nb/v0.2.0\n"},
		{"dependents first", "b,a,.", "v0.2.0\na/v0.2.0\nb/v0.2.0\n"},
		{"a module left out", "b,a", "a/v0.2.0\nb/v0.2.0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"tags", "-C", siblings(t), "-modules", tt.modules, "v0.2.0"}, &stdout, &stderr)
			require.Equal(t, 0, code, "%s", &stderr)
			require.Equal(t, tt.want, stdout.String())
		})
	}
}

func TestTagsCycle(t *testing.T) {
	dir := siblings(t)
	writeFiles(t, dir, map[string]string{
		"a/go.mod": "module example.com/r/a\n\ngo 1.26.0\n\nrequire example.com/r/b v0.1.0\n\nreplace example.com/r/b => ../b\n",
	})
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"tags", "-C", dir, "-modules", "a,b", "v0.2.0"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "the modules require each other in a cycle")
}
