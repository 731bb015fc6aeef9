package retryvet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		format string
		want   []directive
	}{
		{"no verb", nil},
		{"%v", []directive{{start: 0, end: 2, verb: 'v', arg: 0}}},
		{"a %s b %w", []directive{{start: 2, end: 4, verb: 's', arg: 0}, {start: 7, end: 9, verb: 'w', arg: 1}}},
		{"100%% %v", []directive{{start: 6, end: 8, verb: 'v', arg: 0}}},
		{"%+v %#x %-8q", []directive{{start: 0, end: 3, verb: 'v', arg: 0}, {start: 4, end: 7, verb: 'x', arg: 1}, {start: 8, end: 12, verb: 'q', arg: 2}}},
		{"%*s", []directive{{start: 0, end: 3, verb: 's', arg: 1, star: true}}},
		{"%.*f", []directive{{start: 0, end: 4, verb: 'f', arg: 1, star: true}}},
		{"%6.2f", []directive{{start: 0, end: 5, verb: 'f', arg: 0}}},
		{"%[2]v %[1]s", []directive{{start: 0, end: 5, verb: 'v', arg: 1}, {start: 6, end: 11, verb: 's', arg: 0}}},
		{"%[2]*[1]d", []directive{{start: 0, end: 9, verb: 'd', arg: 0, star: true}}},
		{"%v %", []directive{{start: 0, end: 2, verb: 'v', arg: 0}}},
		{"%é", []directive{{start: 0, end: 3, verb: 'é', arg: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			require.Equal(t, tt.want, parseFormat(tt.format), "parseFormat(%q)", tt.format)
		})
	}
}
