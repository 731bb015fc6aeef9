package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckClassified(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, d := range append(libraryModules, "bench", "retrygrpc/compare", "examples/otel", "internal/release") {
		files[d+"/go.mod"] = "module example.com/" + d + "\n"
	}
	writeFiles(t, dir, files)
	require.NoError(t, checkClassified(dir))

	writeFiles(t, dir, map[string]string{"retrytest/faults/go.mod": "module example.com/faults\n"})
	require.ErrorContains(t, checkClassified(dir), "module folder retrytest/faults is neither a library module nor unpublished")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"rehearse", "-C", dir}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "retrytest/faults is neither")
}
