package otelsuite_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

// BenchmarkRecorder measures a first-try success and a call with two
// zero-delay retries, each without hooks, with the Recorder's metrics (the
// SDK's meter provider, read by a ManualReader), with the metrics and a
// recording span in the context, which gets an event per retry, and with
// all that and a span for every attempt.
func BenchmarkRecorder(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rec, err := retryotel.New("payments", retryotel.WithMeterProvider(mp), retryotel.WithoutAttemptSpans())
	if err != nil {
		b.Fatal(err)
	}
	withAttempts, err := retryotel.New("payments", retryotel.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	p := policy.Constant(0).WithMaxAttempts(5)
	ops := []struct {
		name string
		op   func(context.Context) error
	}{
		{"first-try", succeed},
		{"two-retries", (&failTwice{}).op},
	}
	for _, o := range ops {
		for _, mode := range []string{"bare", "metrics", "metrics+span", "metrics+span+attempts"} {
			b.Run(o.name+"/"+mode, func(b *testing.B) {
				var opts []retry.Option
				switch mode {
				case "bare":
				case "metrics+span+attempts":
					opts = append(opts, retry.WithHooks(withAttempts.Hooks()))
				default:
					opts = append(opts, retry.WithHooks(rec.Hooks()))
				}
				ctx := context.Background()
				if mode != "bare" && mode != "metrics" {
					var span interface{ End(...trace.SpanEndOption) }
					ctx, span = tp.Tracer("bench").Start(ctx, "call")
					defer span.End()
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := retry.Do(ctx, o.op, p, opts...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
