package otelsuite_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retryotel"
)

// resendKey is the attribute that ResendCount sets.
const resendKey = attribute.Key("http.request.resend_count")

// busyTwice serves 503 to the first two requests and "ok" after them.
func busyTwice(t *testing.T) *httptest.Server {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// get sends a GET to url through client under a span of tp, and returns
// the body.
func get(t *testing.T, client *http.Client, tp trace.TracerProvider, url string) string {
	t.Helper()
	ctx, span := tp.Tracer("test").Start(t.Context(), "call")
	defer span.End()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(body)
}

// resendCounts returns, for each client span in start order, its
// http.request.resend_count, or -1 when it has none.
func resendCounts(spans []sdktrace.ReadOnlySpan) []int64 {
	var out []int64
	for _, s := range spans {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		n := int64(-1)
		for _, kv := range s.Attributes() {
			if kv.Key == resendKey {
				n = kv.Value.AsInt64()
			}
		}
		out = append(out, n)
	}
	return out
}

// An otelhttp Transport on ResendCount, under retryhttp, marks the client
// spans of the second and third attempts with their resend count, and
// leaves the first attempt's without one.
func TestResendCountThroughRetryHTTP(t *testing.T) {
	srv := busyTwice(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()

	base := srv.Client().Transport
	inner := otelhttp.NewTransport(retryotel.ResendCount(base), otelhttp.WithTracerProvider(tp))
	tr, err := retryhttp.New(inner, policy.Constant(0).WithMaxAttempts(4))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()

	require.Equal(t, "ok", get(t, &http.Client{Transport: tr}, tp, srv.URL))
	require.Equal(t, []int64{-1, 1, 2}, resendCounts(sr.Ended()))
}

// Without retryhttp, a request is its own first attempt: no resend count.
// A nil base sends through http.DefaultTransport.
func TestResendCountOfARequestSentOnce(t *testing.T) {
	srv := busyTwice(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()

	inner := otelhttp.NewTransport(retryotel.ResendCount(nil), otelhttp.WithTracerProvider(tp))
	client := &http.Client{Transport: inner}
	defer client.CloseIdleConnections()
	require.Equal(t, "busy\n", get(t, client, tp, srv.URL))
	require.Equal(t, []int64{-1}, resendCounts(sr.Ended()))
}

// idle is a RoundTripper that counts the calls of its CloseIdleConnections.
type idle struct {
	http.RoundTripper
	closed int
}

func (i *idle) CloseIdleConnections() { i.closed++ }

// A client's CloseIdleConnections reaches the base through retryhttp and
// ResendCount.
func TestResendCountClosesIdleConnectionsOfItsBase(t *testing.T) {
	base := &idle{}
	tr, err := retryhttp.New(retryotel.ResendCount(base), policy.Constant(0))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	client.CloseIdleConnections()
	require.Equal(t, 1, base.closed)
}
