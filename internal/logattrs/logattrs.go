// Package logattrs carries, in the context of a call, the log attributes
// that say what the call is for, from the integration that runs the call to
// the log lines of retry.SlogHooks. retryhttp names the request so, by its
// method and URL.
package logattrs

import (
	"context"
	"log/slog"
)

// Key is the context key. A context whose Value(Key{}) is a slog.LogValuer
// whose value is a group names its call with the group's attributes.
type Key struct{}

// Append appends the attributes that name the call of ctx to attrs, and
// returns the result. A context that names no call leaves attrs as it is.
func Append(ctx context.Context, attrs []slog.Attr) []slog.Attr {
	lv, ok := ctx.Value(Key{}).(slog.LogValuer)
	if !ok {
		return attrs
	}
	if v := lv.LogValue().Resolve(); v.Kind() == slog.KindGroup {
		return append(attrs, v.Group()...)
	}
	return attrs
}
