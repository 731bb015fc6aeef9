package retryotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/retrykit/retrykit/retry"
)

// scope is the instrumentation scope of the meter a Recorder uses.
const scope = "github.com/retrykit/retrykit/retryotel"

// The attributes of the metrics: never an error text, a URL or anything
// else without a bound.
const (
	attrDependency = attribute.Key("retry.dependency") // the name given to New
	attrOutcome    = attribute.Key("retry.outcome")    // how the call ended
)

// Recorder records the retries and ends of the calls to one dependency as
// OpenTelemetry metrics. It records each retry as an event on the call's
// span, and each attempt as a span under the call's.
// Build one per dependency with [New], and give its [Recorder.Hooks] to
// every call that reaches the dependency. A zero Recorder records nothing.
// A Recorder is safe for concurrent use.
type Recorder struct {
	hooks *retry.Hooks

	calls     metric.Int64Counter
	retries   metric.Int64Histogram
	delay     metric.Float64Histogram
	denied    metric.Int64Counter
	hedges    metric.Int64Counter
	hedgeWins metric.Int64Counter

	// The attribute sets, built once so that recording allocates nothing.
	byOutcome [numOutcomes]attrs // the dependency and each outcome
	dep       attrs              // the dependency alone
}

// attrs is one precomputed attribute set, as options of both kinds.
type attrs struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

func newAttrs(kvs ...attribute.KeyValue) attrs {
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return attrs{add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}}
}

// An Option configures a [Recorder] built by [New]. A nil Option changes
// nothing. Its shape is that of retry.Option.
type Option func(config) config

// config is what the Options of a Recorder set.

type config struct {
	mp             metric.MeterProvider
	noAttemptSpans bool // WithoutAttemptSpans was given
}

// WithMeterProvider returns an Option that records through mp instead of
// the global provider, otel.GetMeterProvider. A nil mp keeps the global
// one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c config) config {
		if mp != nil {
			c.mp = mp
		}
		return c
	}
}

// New returns a Recorder for the calls to the dependency named dependency.
// The name becomes the retry.dependency attribute of every measurement, so
// give a fixed name such as "payments", never a URL. New returns an error
// for an empty name, or when the meter refuses an instrument.
//
// Every instrument carries the attribute retry.dependency. The first three
// also carry retry.outcome.
//
//   - retry.client.calls, a counter in {call}, counts the calls by how they
//     ended: success, exhausted, throttled, permanent, cancelled, deadline,
//     hint_too_long, invalid or shed. A shed call ended with retry.ErrShed
//     while it waited for its turn at the guard, before its first attempt.
//   - retry.client.call.retries, a histogram in {retry} after A96's
//     grpc.client.call.retries, records the retries of each call that
//     retried. A call's retries are its attempts, counting the first attempt,
//     less one and less its hedges. In a Loop they are the runs after the
//     first. So the histogram's count is the calls that needed a retry, and
//     a first-try success costs one measurement, not two.
//   - retry.client.call.retry_delay, a histogram in s after A96's
//     grpc.client.call.retry_delay, records how long each call that waited
//     spent waiting between its attempts, DoneEvent.Waited. The waits that
//     the guard imposed count too.
//   - retry.client.retry.denied, a counter in {retry}, counts the retries
//     that the policy's guard denied after their wait, DoneEvent.Denied.
//     Each of them made its call wait again and ask again. The one that
//     ended a throttled call counts too.
//   - retry.client.hedge.started, a counter in {hedge}, counts the attempts
//     started beside one still running.
//   - retry.client.hedge.won, a counter in {call}, counts the hedged calls
//     won by an attempt other than the first: a hedge, or a retry after a
//     round failed.
//
// Each attempt of a call is a span named retry.attempt, of kind internal, a
// child of the span in the call's context. The span starts just before the
// attempt and ends when it returns, so that whatever the attempt does hangs
// under it. A call whose context has no span that records gets no attempt
// spans, so that its attempts do not start traces of their own. The spans
// go to the tracer provider of the call's span. An attempt's span carries
// these attributes.
//
//   - retry.attempt, the attempt's number, counting the first attempt. Hedges
//     count too, in the order the attempts started.
//   - retry.hedge, true for an attempt started beside one still running.
//   - retry.delay, the wait made before the attempt, in seconds. It is 0
//     for the first, and a hedge's hedge delay for a hedge.
//   - error.type and error.message, for an attempt that failed, as on the
//     retry events. The span's status is then Error, with the message.
//     error.type is the status code for a failed HTTP response, "503",
//     "context.Canceled" or "context.DeadlineExceeded" for the context's
//     errors, and the error's Go type otherwise, "*net.OpError".
//
// A hedge that lost ends with the error its cancellation gave it.
func New(dependency string, opts ...Option) (*Recorder, error) {
	if dependency == "" {
		return nil, errors.New("retryotel: empty dependency name")
	}
	c := config{mp: otel.GetMeterProvider()}
	for _, opt := range opts {
		if opt != nil {
			c = opt(c)
		}
	}
	r := &Recorder{dep: newAttrs(attrDependency.String(dependency))}
	for o := range numOutcomes {
		r.byOutcome[o] = newAttrs(attrDependency.String(dependency), attrOutcome.String(o.String()))
	}
	if err := r.instruments(c.mp.Meter(scope)); err != nil {
		return nil, err
	}
	r.hooks = &retry.Hooks{OnRetry: r.onRetry, OnDenied: spanDenied, OnDone: r.onDone}
	if !c.noAttemptSpans {
		r.hooks.OnAttempt, r.hooks.OnAttemptDone = r.onAttempt, r.onAttemptDone
	}
	return r, nil
}

// instruments creates the Recorder's instruments from m.
func (r *Recorder) instruments(m metric.Meter) error {
	var errs [6]error
	r.calls, errs[0] = m.Int64Counter("retry.client.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls made through a retry policy, by how they ended."))
	r.retries, errs[1] = m.Int64Histogram("retry.client.call.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries made by each call that retried."),
		metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 10))
	r.delay, errs[2] = m.Float64Histogram("retry.client.call.retry_delay", metric.WithUnit("s"),
		metric.WithDescription("Time each call spent waiting between its attempts."),
		metric.WithExplicitBucketBoundaries(0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
	r.denied, errs[3] = m.Int64Counter("retry.client.retry.denied", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries held back by the guard: the call waits and asks again."))
	r.hedges, errs[4] = m.Int64Counter("retry.client.hedge.started", metric.WithUnit("{hedge}"),
		metric.WithDescription("Attempts started beside one still running."))
	r.hedgeWins, errs[5] = m.Int64Counter("retry.client.hedge.won", metric.WithUnit("{call}"),
		metric.WithDescription("Hedged calls won by an attempt other than the first."))
	if err := errors.Join(errs[:]...); err != nil {
		return errors.Join(errors.New("retryotel: creating instruments"), err)
	}
	return nil
}

// Hooks returns the hooks that record the calls they are given to, for
// retry.WithHooks. Integrations take them the same way, inside their
// WithRetryOptions. The same *retry.Hooks comes back every time. For a zero
// Recorder it is nil, which observes nothing.
func (r *Recorder) Hooks() *retry.Hooks { return r.hooks }

func (r *Recorder) onRetry(ctx context.Context, e retry.RetryEvent) {
	if e.Err == nil {
		return // a Loop's pause after a run that succeeded: no retry
	}
	spanRetry(ctx, e)
}

func (r *Recorder) onDone(ctx context.Context, e retry.DoneEvent) {
	o := classify(e.Err)
	a := &r.byOutcome[o]
	r.calls.Add(ctx, 1, a.add...)
	if n := e.Attempts - 1 - e.Hedges; n > 0 {
		r.retries.Record(ctx, int64(n), a.record...)
	}
	if e.Waited > 0 {
		r.delay.Record(ctx, e.Waited.Seconds(), a.record...)
	}
	if e.Denied > 0 {
		r.denied.Add(ctx, int64(e.Denied), r.dep.add...)
	}
	if e.Hedges > 0 {
		r.hedges.Add(ctx, int64(e.Hedges), r.dep.add...)
		if e.Won > 1 {
			r.hedgeWins.Add(ctx, 1, r.dep.add...)
		}
	}
	spanDone(ctx, e, o)
}
