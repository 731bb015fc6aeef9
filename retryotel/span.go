package retryotel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/retry"
)

// maxMessage bounds the error message an event carries, in bytes.
const maxMessage = 128

// The attributes of the span events. error.type and error.message are the
// semantic conventions' names.
const (
	attrAttempt  = attribute.Key("retry.attempt")  // attempts made so far, counting the first attempt and hedges
	attrDelay    = attribute.Key("retry.delay")    // the wait about to start, in seconds
	attrHinted   = attribute.Key("retry.hinted")   // the delay came from the operation's hint
	attrAttempts = attribute.Key("retry.attempts") // attempts made, counting the first attempt and hedges
	attrHedges   = attribute.Key("retry.hedges")   // attempts started beside one still running
	attrErrType  = attribute.Key("error.type")     // the error's class (see errorType)
	attrErrMsg   = attribute.Key("error.message")  // the error's text, cut to maxMessage bytes
)

// spanRetry adds a "retry" event to the span in ctx, when it records.
func spanRetry(ctx context.Context, e retry.RetryEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	kvs := make([]attribute.KeyValue, 0, 5)
	kvs = append(kvs,
		attrAttempt.Int(e.Attempt),
		attrDelay.Float64(e.Delay.Seconds()),
		attrHinted.Bool(e.Hinted))
	if e.Err != nil {
		kvs = append(kvs, attrErrType.String(errorType(e.Err)), attrErrMsg.String(short(e.Err.Error())))
	}
	span.AddEvent("retry", trace.WithAttributes(kvs...))
}

// spanDenied adds a "retry.denied" event to the span in ctx, when it
// records: the guard denied the retry that the last "retry" event's
// wait was for.
func spanDenied(ctx context.Context, e retry.RetryEvent) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent("retry.denied", trace.WithAttributes(
		attrAttempt.Int(e.Attempt),
		attrDelay.Float64(e.Delay.Seconds())))
}

// spanDone adds a "retry.done" event to the span in ctx, when it records,
// for a call that retried, hedged or failed: a first-try success adds
// nothing.
func spanDone(ctx context.Context, e retry.DoneEvent, o outcome) {
	if o == success && e.Attempts <= 1 {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent("retry.done", trace.WithAttributes(
		attrAttempts.Int(e.Attempts),
		attrHedges.Int(e.Hedges),
		attrOutcome.String(o.String())))
}

// errorType returns err's class for error.type. An error with a status
// code, as retryhttp's attempt errors have, gives the code, "503", as the
// HTTP conventions do for a failed response. The context's errors give
// "context.Canceled" and "context.DeadlineExceeded". Any other error gives
// its Go type, looking through wrappers that add nothing to its message,
// such as retry.After's: "*net.OpError", never the type of a mark.
func errorType(err error) string {
	var status interface{ StatusCode() int }
	switch {
	case errors.As(err, &status):
		return strconv.Itoa(status.StatusCode())
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context.DeadlineExceeded"
	}
	msg := err.Error()
	for {
		inner := errors.Unwrap(err)
		if inner == nil || inner.Error() != msg {
			return fmt.Sprintf("%T", err)
		}
		err = inner
	}
}

// short returns msg cut to at most maxMessage bytes, on a rune boundary,
// with "…" when it was cut.
func short(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
