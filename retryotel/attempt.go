package retryotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/retry"
)

// attemptSpanName is the name of every attempt's span. It is the same for
// every attempt, as the conventions ask of span names: the number is an
// attribute.
const attemptSpanName = "retry.attempt"

// attrHedge is the attribute that tells a hedge from a retry.
const attrHedge = attribute.Key("retry.hedge") // the attempt started beside one still running

// WithoutAttemptSpans returns an Option that makes the Recorder start no
// span for each attempt. The call's span still gets its events.
func WithoutAttemptSpans() Option {
	return func(c config) config {
		c.noAttemptSpans = true
		return c
	}
}

// onAttempt starts the span of an attempt, as a child of the call's span,
// and returns a context that carries it. So whatever the attempt does, an
// otelhttp or otelgrpc client span for one, hangs under the attempt's span.
// It starts none unless the call's span records: the attempts of a call
// that nothing traces are not made roots of traces of their own.
func (r *Recorder) onAttempt(ctx context.Context, e retry.AttemptEvent) context.Context {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx
	}
	tracer := parent.TracerProvider().Tracer(scope)
	ctx, _ = tracer.Start(ctx, attemptSpanName, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attrAttempt.Int(e.Attempt),
			attrHedge.Bool(e.Hedge),
			attrDelay.Float64(e.Wait.Seconds())))
	return ctx
}

// onAttemptDone ends the span that onAttempt started for the attempt, with
// its outcome: an error status, error.type and error.message for an error,
// an unset status for a success, as the conventions ask.
//
// ctx is the one onAttempt returned. So a span in it that records is the
// attempt's: onAttempt returns a context of its own whenever its parent
// records, and a span that does not record never starts to.
func (r *Recorder) onAttemptDone(ctx context.Context, e retry.AttemptEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return // onAttempt started no span: the one in ctx is the caller's
	}
	if e.Err != nil {
		msg := short(e.Err.Error())
		span.SetAttributes(attrErrType.String(errorType(e.Err)), attrErrMsg.String(msg))
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}
