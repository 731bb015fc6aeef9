// Package retryotel turns the hooks of package retry into OpenTelemetry
// metrics and span events. Build one [Recorder] per dependency with [New],
// and give its [Recorder.Hooks] to every call that reaches the dependency.
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
// ask; see [New] for the list. Each retry is an event on the span in the
// call's context.
//
// What hooks cannot tell, a Recorder does not record: hooks are told of a
// retry before its wait and of the call's end, not of each attempt's start
// and end, so there is no span per attempt (wrap the operation, or give
// retryhttp an instrumented base RoundTripper, for those). The time a call
// waited comes from its end (retry.DoneEvent.Waited), as one measurement
// per call.
package retryotel
