package otelsuite_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

// The attributes of an attempt's span.
var attemptKeys = []attribute.Key{"retry.attempt", "retry.hedge", "retry.delay", "error.type", "error.message"}

// Each attempt of Do is a span under the call's, numbered, with the wait
// made before it, and an error status when it failed.
func TestAttemptSpansOfDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := newRecorder(t)
		tr := newTracing(t)
		ctx, span := tr.start(t.Context(), "charge")
		var parents []trace.SpanID
		op := failing(2)
		err := retry.Do(ctx, func(ctx context.Context) error {
			parents = append(parents, trace.SpanFromContext(ctx).SpanContext().SpanID())
			return op(ctx)
		}, policy.Exponential(100*time.Millisecond).WithMaxAttempts(5), retry.WithHooks(rec.Hooks()))
		require.NoError(t, err)
		span.End()
		require.Equal(t, []string{
			"charge",
			"  retry.attempt error.message=connection refused,error.type=*errors.errorString,retry.attempt=1,retry.delay=0,retry.hedge=false [error: connection refused]",
			"  retry.attempt error.message=connection refused,error.type=*errors.errorString,retry.attempt=2,retry.delay=0.1,retry.hedge=false [error: connection refused]",
			"  retry.attempt retry.attempt=3,retry.delay=0.2,retry.hedge=false",
		}, tr.tree(attemptKeys...))
		started := tr.sr.Started()
		require.Len(t, parents, 3)
		for i, id := range parents {
			require.Equal(t, started[i+1].SpanContext().SpanID(), id, "attempt %d runs under its own span", i+1)
		}
	})
}

// A hedged call has a span for the first attempt and one for the hedge,
// both under the call's. The hedge's span says it is one, with the hedge
// delay as its wait. The first attempt, cancelled when the hedge won, ends
// with the cancellation as its error.
func TestAttemptSpansOfAHedgedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := newRecorder(t)
		tr := newTracing(t)
		ctx, span := tr.start(t.Context(), "lookup")
		var calls atomic.Int32
		op := func(ctx context.Context) error {
			if calls.Add(1) == 1 {
				<-ctx.Done() // slow, until the hedge wins
				return ctx.Err()
			}
			return nil
		}
		p := policy.Constant(time.Second).WithMaxAttempts(3).WithHedging(policy.Hedging{Delay: 50 * time.Millisecond})
		require.NoError(t, retry.Hedge(ctx, op, p, retry.WithHooks(rec.Hooks())))
		synctest.Wait() // the loser's goroutine returns after the call
		span.End()
		require.Equal(t, []string{
			"lookup",
			"  retry.attempt error.message=context canceled,error.type=context.Canceled,retry.attempt=1,retry.delay=0,retry.hedge=false [error: context canceled]",
			"  retry.attempt retry.attempt=2,retry.delay=0.05,retry.hedge=true",
		}, tr.tree(attemptKeys...))
	})
}

// A call whose context carries no span that records gets no attempt spans,
// rather than a trace of its own for every attempt.
func TestAttemptSpansNoneWithoutARecordingSpan(t *testing.T) {
	rec, _ := newRecorder(t)
	tr := newTracing(t)
	var inAttempt trace.Span
	err := retry.Do(t.Context(), func(ctx context.Context) error {
		inAttempt = trace.SpanFromContext(ctx)
		return nil
	}, policy.Constant(0), retry.WithHooks(rec.Hooks()))
	require.NoError(t, err)
	require.Empty(t, tr.tree())
	require.False(t, inAttempt.SpanContext().IsValid())
}

// WithoutAttemptSpans leaves the call's span alone, with its events.
func TestWithoutAttemptSpans(t *testing.T) {
	rec, err := retryotel.New("payments", retryotel.WithoutAttemptSpans())
	require.NoError(t, err)
	tr := newTracing(t)
	ctx, span := tr.start(t.Context(), "charge")
	require.NoError(t, retry.Do(ctx, failing(1), policy.Constant(0), retry.WithHooks(rec.Hooks())))
	span.End()
	require.Equal(t, []string{"charge"}, tr.tree())
	require.Len(t, tr.sr.Ended()[0].Events(), 2, "the retry and the end")
}

// An attempt span is ended by its own attempt's end only: a span that an
// operation starts and leaves in the context is not mistaken for it.
func TestAttemptSpanEndsItsOwnSpanOnly(t *testing.T) {
	rec, _ := newRecorder(t)
	tr := newTracing(t)
	ctx, span := tr.start(t.Context(), "outer")
	inner := retry.Hooks{OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
		ctx, _ = tr.start(ctx, "someone else's") // never ended: the tree says so
		return ctx
	}}
	err := retry.Do(ctx, func(context.Context) error { return errors.New("once") }, policy.Constant(0).WithMaxAttempts(1),
		retry.WithHooks(rec.Hooks()), retry.WithHooks(&inner))
	require.Error(t, err)
	span.End()
	require.Equal(t, []string{
		"outer",
		"  retry.attempt retry.attempt=1 [error: once]",
		"    someone else's (not ended)",
	}, tr.tree("retry.attempt"))
}
