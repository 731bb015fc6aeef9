// Package retryotel turns the hooks of package retry into OpenTelemetry
// metrics, span events and a span for every attempt. Build one [Recorder]
// per dependency with [New], and give its [Recorder.Hooks] to every call
// that reaches the dependency.
//
//	rec, err := retryotel.New("payments")
//	if err != nil {
//		return err
//	}
//	err = retry.Do(ctx, op, p, retry.WithHooks(rec.Hooks()))
//
// The same hooks serve every call of package retry. retryhttp, retrygrpc and
// retrysql take them through retry.WithHooks inside their WithRetryOptions.
// The metrics are named after gRPC's retry
// metrics (proposal A96, grpc.client.call.*) in a retry.client namespace,
// with units and attribute names as the OpenTelemetry semantic conventions
// ask; see [New] for the list. Each wait before a retry is a "retry" event
// on the span in the call's context. A retry the guard denied after its
// wait is a "retry.denied" event.
//
// Each attempt of a call made under a span that records is a span of its
// own, a child of the call's, as gRPC's proposal A66 traces attempts. The
// attempt's span is the parent of whatever the attempt does, such as
// otelhttp's or otelgrpc's client span. [New] lists its attributes, and
// [WithoutAttemptSpans] turns these spans off. [ResendCount] sets
// OpenTelemetry's http.request.resend_count on the client spans of the
// requests that retryhttp sends again.
//
// The time a call waited comes from its end (retry.DoneEvent.Waited), as one
// measurement per call.
package retryotel
