package retryotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
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
// allocates nothing, with or without a recording span in its context, and
// that retries at zero delay allocate nothing either while no span records.
func TestAllocations(t *testing.T) {
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
	require.True(t, span.IsRecording())
	retries := &failTwice{}
	tests := []struct {
		name string
		ctx  context.Context
		op   func(context.Context) error
	}{
		{"first try", context.Background(), succeed},
		{"first try in a recording span", traced, succeed},
		{"two retries at zero delay", context.Background(), retries.op},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(1000, func() {
				if err := retry.Do(tt.ctx, tt.op, p, opt); err != nil {
					t.Fatal(err)
				}
			})
			require.Zero(t, allocs, "allocations per call")
		})
	}
}
