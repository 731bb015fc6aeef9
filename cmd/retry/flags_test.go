package main

import (
	"flag"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocListsEveryFlag checks that the package doc's table of flags has a
// row for every flag, and no row for a flag that does not exist.
func TestDocListsEveryFlag(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	rows := map[string]bool{}
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if rest, ok := strings.CutPrefix(line, "\t-"); ok {
			rows[strings.Fields(rest)[0]] = true
		}
	}
	newFlags().fs.VisitAll(func(fl *flag.Flag) {
		require.True(t, rows[fl.Name], "the package doc has no row for -%s", fl.Name)
		delete(rows, fl.Name)
	})
	require.Empty(t, rows, "rows for flags that do not exist")
}

func TestParseCodes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[int]bool
		err  string
	}{
		{"1", map[int]bool{1: true}, ""},
		{"1, 75,255", map[int]bool{1: true, 75: true, 255: true}, ""},
		{"", nil, `bad exit status ""`},
		{"0", nil, `bad exit status "0"`},
		{"256", nil, `bad exit status "256"`},
		{"-3", nil, `bad exit status "-3"`},
		{"1-3", nil, `bad exit status "1-3"`},
	} {
		got, err := parseCodes(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "parseCodes(%q)", tc.in)
			continue
		}
		require.NoError(t, err, "parseCodes(%q)", tc.in)
		require.Equal(t, tc.want, got, "parseCodes(%q)", tc.in)
	}
}
