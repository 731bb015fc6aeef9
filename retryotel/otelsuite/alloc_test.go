package otelsuite_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

func succeed(context.Context) error { return nil }

// failTwice fails twice, then succeeds, and starts over.
type failTwice struct{ n int }

func (f *failTwice) op(context.Context) error {
	if f.n++; f.n%3 != 0 {
		return errFlaky
	}
	return nil
}

// TestAllocations asserts that a first-try success with metrics on
// allocates nothing while no span records, and nothing in a recording span
// without attempt spans. Retries at zero delay allocate nothing either
// while no span records, beyond the one context of package retry that
// carries the attempt number (see retry.Attempt).
func TestAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	rec, err := retryotel.New("payments", retryotel.WithMeterProvider(mp), retryotel.WithoutAttemptSpans())
	require.NoError(t, err)
	opt := retry.WithHooks(rec.Hooks())
	p := policy.Constant(0).WithMaxAttempts(5)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	traced, span := tp.Tracer("test").Start(context.Background(), "call")
	defer span.End()
	require.True(t, span.IsRecording())
	retries := &failTwice{}
	const numbering = 1 // package retry's, once for a call that retries
	tests := []struct {
		name string
		ctx  context.Context
		op   func(context.Context) error
		want float64
	}{
		{"first try", context.Background(), succeed, 0},
		{"first try in a recording span", traced, succeed, 0},
		{"two retries at zero delay", context.Background(), retries.op, numbering},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(1000, func() {
				if err := retry.Do(tt.ctx, tt.op, p, opt); err != nil {
					t.Fatal(err)
				}
			})
			require.Equal(t, tt.want, allocs, "allocations per call")
		})
	}
}

// A first-try success in a recording span, with attempt spans on, costs the
// allocations of the attempt's span and nothing more: the SDK's own for a
// child span started with the same options and ended.
func TestAllocationsOfAnAttemptSpan(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	rec, _ := newRecorder(t)
	opt := retry.WithHooks(rec.Hooks())
	p := policy.Constant(0).WithMaxAttempts(5)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	traced, span := tp.Tracer("test").Start(context.Background(), "call")
	defer span.End()
	tracer := tp.Tracer("github.com/retrykit/retrykit/retryotel")
	bare := testing.AllocsPerRun(1000, func() {
		_, s := tracer.Start(traced, "retry.attempt", trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attribute.Int("retry.attempt", 1), attribute.Bool("retry.hedge", false), attribute.Float64("retry.delay", 0)))
		s.End()
	})
	require.NotZero(t, bare)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := retry.Do(traced, succeed, p, opt); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, bare, allocs, "allocations per call beyond the attempt span's own")
}
