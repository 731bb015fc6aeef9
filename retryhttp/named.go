package retryhttp

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"

	"github.com/retrykit/retrykit/internal/logattrs"
)

// namedContext is the context a request's retry loop runs on: the
// request's own, which also names the request, by its method and URL, in
// the lines that retry.SlogHooks logs of the call. The URL is redacted as
// the Transport's errors redact it.
type namedContext struct {
	context.Context
	req *http.Request
}

func (c *namedContext) Value(key any) any {
	if _, ok := key.(logattrs.Key); ok {
		return c
	}
	return c.Context.Value(key)
}

func (c *namedContext) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("method", cmp.Or(c.req.Method, http.MethodGet)),
		slog.String("url", c.req.URL.Redacted()))
}

// loopContext returns the context the call's retry loop runs on. Options
// are the only way hooks come, so with options it is the request's context
// named as the request, and without them the request's context as it is.
func (c *call) loopContext() context.Context {
	if len(c.t.opts) == 0 {
		return c.req.Context()
	}
	c.named = namedContext{Context: c.req.Context(), req: c.req}
	return &c.named
}
