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
// ask; see [New] for the list. Each wait before a retry is a "retry" event
// on the span in the call's context. A retry the guard denied after its
// wait is a "retry.denied" event.
//
// A Recorder starts no span per attempt. Hooks are told of each attempt
// (retry.Hooks.OnAttempt and OnAttemptDone), so a Hooks of your own, given
// beside the Recorder's, can start one. The time a call waited comes from
// its end (retry.DoneEvent.Waited), as one measurement per call.
package retryotel
