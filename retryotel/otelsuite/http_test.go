package otelsuite_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// A request through retryhttp to a loopback server that answers 503 twice
// records one successful call with two retries, and a span event for each.
func TestThroughRetryHTTP(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()

	rec, reader := newRecorder(t)
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(4), retryhttp.WithRetryOptions(retry.WithHooks(rec.Hooks())))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	ctx, span := tp.Tracer("test").Start(t.Context(), "GET")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "ok", string(body))
	span.End()

	require.Equal(t, sorted([]string{
		retriesOf + "success: count 1 sum 2 min 2 max 2",
		callsOf + "success: 1",
	}), collect(t, reader), "no wait: nothing waited")
	require.Equal(t, []string{
		"retry error.message=status 503 Service Unavailable,error.type=503,retry.attempt=1,retry.delay=0,retry.hinted=false",
		"retry error.message=status 503 Service Unavailable,error.type=503,retry.attempt=2,retry.delay=0,retry.hinted=false",
		"retry.done retry.attempts=3,retry.hedges=0,retry.outcome=success",
	}, events(t, sr))
	require.NoError(t, tp.Shutdown(context.Background()))
}
