package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLineMatcher(t *testing.T) {
	long := strings.Repeat("x", maxLine)
	for _, tc := range []struct {
		name   string
		re     string
		writes []string
		want   bool
	}{
		{"one line", "^ready$", []string{"ready\n"}, true},
		{"split across writes", "^ready$", []string{"rea", "dy", "\n"}, true},
		{"a later line", "^ready$", []string{"not yet\nstill not\nready\n"}, true},
		{"crlf", "^ready$", []string{"ready\r\n"}, true},
		{"last line without a newline", "^ready$", []string{"x\nready"}, true},
		{"no line matches", "^ready$", []string{"not ready\nready now\n"}, false},
		{"not across lines", "a.b", []string{"a\nb\n"}, false},
		{"the start of a long line", "^x+y", []string{long + "y\n"}, false},
		{"the line after a long one", "^y$", []string{long + long + "\ny\n"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &lineMatcher{re: regexp.MustCompile(tc.re)}
			for _, w := range tc.writes {
				n, err := m.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			require.Equal(t, tc.want, m.end())
			require.LessOrEqual(t, cap(m.line), 2*maxLine, "the line buffer stays bounded")
		})
	}
}
