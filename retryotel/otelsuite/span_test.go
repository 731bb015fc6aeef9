package otelsuite_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// events returns the events of the call's span, the one root span
// recorded, each as its name and its attributes.
func events(t *testing.T, sr *tracetest.SpanRecorder) []string {
	t.Helper()
	var roots []sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		if !s.Parent().IsValid() {
			roots = append(roots, s)
		}
	}
	require.Len(t, roots, 1)
	var out []string
	for _, ev := range roots[0].Events() {
		set := attribute.NewSet(ev.Attributes...)
		out = append(out, ev.Name+" "+set.Encoded(attribute.DefaultEncoder()))
	}
	return out
}

func TestSpanEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := newRecorder(t)
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		ctx, span := tp.Tracer("test").Start(t.Context(), "charge")
		long := strings.Repeat("é", 100) // 200 bytes
		calls := 0
		op := func(context.Context) error {
			switch calls++; calls {
			case 1:
				return errFlaky
			case 2:
				return retry.After(3*time.Second, &statusError{long})
			}
			return nil
		}
		err := retry.Do(ctx, op, policy.Constant(100*time.Millisecond).WithMaxAttempts(5), retry.WithHooks(rec.Hooks()))
		require.NoError(t, err)
		span.End()
		cut := strings.Repeat("é", 62) + "…" // 124 + 3 bytes: no rune split
		require.Equal(t, []string{
			"retry error.message=connection refused,error.type=*errors.errorString,retry.attempt=1,retry.delay=0.1,retry.hinted=false",
			"retry error.message=" + cut + ",error.type=*otelsuite_test.statusError,retry.attempt=2,retry.delay=3,retry.hinted=true",
			"retry.done retry.attempts=3,retry.hedges=0,retry.outcome=success",
		}, events(t, sr))
		require.NoError(t, tp.Shutdown(context.Background()))
	})
}

func TestSpanEventsNoneForAFirstTrySuccess(t *testing.T) {
	rec, _ := newRecorder(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	ctx, span := tp.Tracer("test").Start(t.Context(), "charge")
	require.NoError(t, retry.Do(ctx, failing(0), policy.Constant(0), retry.WithHooks(rec.Hooks())))
	span.End()
	require.Empty(t, events(t, sr))
	require.NoError(t, tp.Shutdown(context.Background()))
}

func TestSpanEventOfAFailedCall(t *testing.T) {
	rec, _ := newRecorder(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	ctx, span := tp.Tracer("test").Start(t.Context(), "charge")
	err := retry.Do(ctx, func(context.Context) error { return retry.Permanent(errFlaky) }, policy.Constant(0), retry.WithHooks(rec.Hooks()))
	require.ErrorIs(t, err, errFlaky)
	span.End()
	require.Equal(t, []string{"retry.done retry.attempts=1,retry.hedges=0,retry.outcome=permanent"}, events(t, sr))
	require.NoError(t, tp.Shutdown(context.Background()))
}

type statusError struct{ msg string }

func (e *statusError) Error() string { return e.msg }

func TestSpanEventsOfRetriesHeldBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := newRecorder(t)
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		ctx, span := tp.Tracer("test").Start(t.Context(), "charge")
		g := policy.NewGuard(2, 0.5)
		for protocol(g).Tokens() >= 1 {
			protocol(g).Record(true, admit.Failed) // retries that failed
		}
		protocol(g).Allow(time.Now()) // the probe of this second
		protocol(g).Start()           // and another call in flight: one alone keeps its retries
		defer protocol(g).Done()
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(3).WithGuard(g)
		err := retry.Do(ctx, failing(-1), p, retry.WithHooks(rec.Hooks()))
		require.ErrorIs(t, err, retry.ErrThrottled)
		span.End()
		require.Equal(t, []string{
			"retry error.message=connection refused,error.type=*errors.errorString,retry.attempt=1,retry.delay=0.1,retry.hinted=false",
			"retry.denied retry.attempt=1,retry.delay=0.1",
			"retry error.message=connection refused,error.type=*errors.errorString,retry.attempt=1,retry.delay=0.1,retry.hinted=false",
			"retry.denied retry.attempt=1,retry.delay=0.1",
			"retry.done retry.attempts=1,retry.hedges=0,retry.outcome=throttled",
		}, events(t, sr))
		require.NoError(t, tp.Shutdown(context.Background()))
	})
}
