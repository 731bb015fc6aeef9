package otelsuite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracing is an SDK tracer provider whose spans a test reads back.
type tracing struct {
	tp *sdktrace.TracerProvider
	sr *tracetest.SpanRecorder
}

func newTracing(t *testing.T) *tracing {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &tracing{tp: tp, sr: sr}
}

// start starts the span of a call, named name.
func (tr *tracing) start(ctx context.Context, name string) (context.Context, trace.Span) {
	return tr.tp.Tracer("test").Start(ctx, name)
}

// tree returns the spans started so far as a tree, one line per span, in
// the order they started, each indented by two spaces per ancestor. A line
// is the span's name, then the attributes among keys that it has, then its
// status when it is an error. A span that has not ended says so.
func (tr *tracing) tree(keys ...attribute.Key) []string {
	spans := tr.sr.Started()
	depth := map[trace.SpanID]int{}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		parent := s.Parent().SpanID()
		if !s.Parent().IsValid() || !slices.ContainsFunc(spans, func(o sdktrace.ReadWriteSpan) bool { return o.SpanContext().SpanID() == parent }) {
			roots = append(roots, s)
			continue
		}
		children[parent] = append(children[parent], s)
	}
	var lines []string
	var walk func(s sdktrace.ReadOnlySpan)
	walk = func(s sdktrace.ReadOnlySpan) {
		id := s.SpanContext().SpanID()
		lines = append(lines, strings.Repeat("  ", depth[id])+line(s, keys))
		for _, c := range children[id] {
			depth[c.SpanContext().SpanID()] = depth[id] + 1
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return lines
}

// line describes one span for tree.
func line(s sdktrace.ReadOnlySpan, keys []attribute.Key) string {
	var kvs []attribute.KeyValue
	for _, kv := range s.Attributes() {
		if slices.Contains(keys, kv.Key) {
			kvs = append(kvs, kv)
		}
	}
	out := s.Name()
	if len(kvs) > 0 {
		set := attribute.NewSet(kvs...)
		out += " " + set.Encoded(attribute.DefaultEncoder())
	}
	if st := s.Status(); st.Code == codes.Error {
		out += fmt.Sprintf(" [error: %s]", st.Description)
	}
	if s.EndTime().IsZero() {
		out += " (not ended)"
	}
	return out
}
