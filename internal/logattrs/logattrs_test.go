package logattrs_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/logattrs"
)

type named struct {
	context.Context
	v slog.Value
}

func (n named) Value(key any) any {
	if _, ok := key.(logattrs.Key); ok {
		return n
	}
	return n.Context.Value(key)
}

func (n named) LogValue() slog.Value { return n.v }

type otherKey struct{}

func TestAppend(t *testing.T) {
	start := []slog.Attr{slog.Int("attempt", 1)}
	bg := context.Background()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want []slog.Attr
	}{
		{"no name", bg, start},
		{"a group", named{bg, slog.GroupValue(slog.String("method", "GET"), slog.String("url", "http://x/"))},
			[]slog.Attr{slog.Int("attempt", 1), slog.String("method", "GET"), slog.String("url", "http://x/")}},
		{"a value that is no group", named{bg, slog.StringValue("sync")}, start},
		{"under a context derived from it", context.WithValue(named{bg, slog.GroupValue(slog.String("call", "sync"))}, otherKey{}, 1),
			[]slog.Attr{slog.Int("attempt", 1), slog.String("call", "sync")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := logattrs.Append(tt.ctx, append([]slog.Attr(nil), start...))
			require.Equal(t, len(tt.want), len(got))
			for i := range got {
				require.True(t, tt.want[i].Equal(got[i]), "attribute %d: %v, want %v", i, got[i], tt.want[i])
			}
		})
	}
}
