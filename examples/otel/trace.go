package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retryotel"
)

// shown are the attributes the trace tree prints, of all that the spans
// carry.
var shown = []attribute.Key{
	"retry.attempt", "retry.hedge", "retry.delay",
	"http.request.resend_count", "http.response.status_code",
}

// traceOne makes one call to url under a span of its own, through the
// client tracedClient makes, and prints the spans it recorded as a tree.
func traceOne(rec *retryotel.Recorder, url string) error {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	p := policy.Exponential(5 * time.Millisecond).WithMaxAttempts(4)
	client, err := tracedClient(rec, tp, p)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	ctx, span := tp.Tracer("checkout").Start(context.Background(), "checkout")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	span.End()

	fmt.Printf("\nGET /traced under the span checkout, policy %v: %s\n", p, resp.Status)
	printTree(exporter.GetSpans())
	return nil
}

// tracedClient returns a client whose Transport is retryhttp's over
// otelhttp's over retryotel.ResendCount, with rec's hooks. The Recorder's
// hooks start a span for each attempt under the call's, and otelhttp's
// client span hangs under the attempt's. A program makes such a client once
// per dependency and keeps it, so that every call shares its guard and its
// connections.
func tracedClient(rec *retryotel.Recorder, tp trace.TracerProvider, p policy.Policy) (*http.Client, error) {
	inner := otelhttp.NewTransport(retryotel.ResendCount(nil), otelhttp.WithTracerProvider(tp))
	tr, err := retryhttp.New(inner, p, retryhttp.WithRetryOptions(retry.WithHooks(rec.Hooks())))
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}, nil
}

// printTree prints spans as a tree, each span indented under its parent,
// children in the order they started.
func printTree(spans tracetest.SpanStubs) {
	slices.SortStableFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	children := map[trace.SpanID][]tracetest.SpanStub{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID(); s.Parent.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		fmt.Println(strings.Repeat("  ", depth) + describe(s))
		for _, c := range children[s.SpanContext.SpanID()] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// describe returns a span's name, the shown attributes it has, and its
// status when it is an error.
func describe(s tracetest.SpanStub) string {
	parts := []string{s.Name}
	for _, key := range shown {
		for _, kv := range s.Attributes {
			if kv.Key == key {
				parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
			}
		}
	}
	if s.Status.Code == codes.Error {
		parts = append(parts, "error")
		if s.Status.Description != "" {
			parts[len(parts)-1] += ": " + s.Status.Description
		}
	}
	return strings.Join(parts, " ")
}
