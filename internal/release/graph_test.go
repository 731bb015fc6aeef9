package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTestOnlyModules(t *testing.T) {
	// example.com/c is the consumer; it requires the released module m,
	// whose library imports example.com/lib, which requires x/net.
	base := "example.com/c example.com/m@v0.1.0\n" +
		"example.com/c go@1.26.0\n" +
		"example.com/m@v0.1.0 example.com/lib@v1.0.0\n" +
		"example.com/m@v0.1.0 github.com/stretchr/testify@v1.12.1\n" +
		"example.com/m@v0.1.0 go@1.23.0\n" +
		"example.com/lib@v1.0.0 golang.org/x/net@v0.60.0\n" +
		"github.com/stretchr/testify@v1.12.1 github.com/davecgh/go-spew@v1.1.1\n"
	lib := []string{"example.com/m", "example.com/lib", "golang.org/x/net"}
	tests := []struct {
		name  string
		graph string
		want  []string
	}{
		{"library and test modules only", base, nil},
		{
			"a module for m's tests, and what it requires",
			base + "example.com/m@v0.1.0 google.golang.org/grpc@v1.85.0\n" +
				"google.golang.org/grpc@v1.85.0 golang.org/x/net@v0.61.0\n" +
				"google.golang.org/grpc@v1.85.0 google.golang.org/genproto@v0.1.0\n",
			[]string{"google.golang.org/genproto", "google.golang.org/grpc"},
		},
		{
			"a module m requires that the library's imports also require",
			base + "example.com/m@v0.1.0 google.golang.org/grpc@v1.85.0\n" +
				"example.com/lib@v1.0.0 google.golang.org/grpc@v1.85.0\n",
			nil,
		},
		{
			"what testify requires",
			base + "example.com/m@v0.1.0 go.yaml.in/yaml/v3@v3.0.5\n" +
				"github.com/stretchr/testify@v1.12.1 go.yaml.in/yaml/v3@v3.0.1\n",
			nil,
		},
		{
			"another module's requirement is not m's",
			base + "example.com/lib@v1.0.0 example.com/tool@v1.0.0\n",
			nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, testOnlyModules(tt.graph, "example.com/m", lib))
		})
	}
}
