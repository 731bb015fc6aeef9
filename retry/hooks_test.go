//go:build go1.25

package retry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// events records what hooks are told.
type events struct {
	mu      sync.Mutex
	retries []retry.RetryEvent
	dones   []retry.DoneEvent
}

func (e *events) hooks() *retry.Hooks {
	return &retry.Hooks{
		OnRetry: func(_ context.Context, ev retry.RetryEvent) {
			e.mu.Lock()
			e.retries = append(e.retries, ev)
			e.mu.Unlock()
		},
		OnDone: func(_ context.Context, ev retry.DoneEvent) { e.mu.Lock(); e.dones = append(e.dones, ev); e.mu.Unlock() },
	}
}

func TestHooksOnlyBeforeRealWaits(t *testing.T) {
	clk := retrytest.NewClock()
	var ev events
	op := fails(10, errFlaky)
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), op.op, policy.Default().WithMaxAttempts(3).WithClock(clk), retry.WithHooks(ev.hooks()))
	}()
	clk.Step(t)
	clk.Step(t)
	err := result(t, done)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, []retry.RetryEvent{
		{Attempt: 1, Err: errFlaky, Delay: 10 * time.Second},
		{Attempt: 2, Err: errFlaky, Delay: 20 * time.Second, Elapsed: 10 * time.Second},
	}, ev.retries, "no retry event after the final attempt")
	require.Len(t, ev.dones, 1)
	require.Equal(t, 3, ev.dones[0].Attempts)
	require.Equal(t, 30*time.Second, ev.dones[0].Elapsed)
	require.Same(t, err, ev.dones[0].Err)
}

func TestHooksNotToldOfAWaitThatDoesNotHappen(t *testing.T) {
	tests := []struct {
		name     string
		deadline time.Duration // 0: none
		p        policy.Policy
	}{
		{"deadline", 5 * time.Second, policy.Default()},
		{"time limit", 0, policy.Default().WithMaxElapsed(5 * time.Second)},
		{"attempts", 0, policy.Default().WithMaxAttempts(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := retrytest.NewClock()
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = clk.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			var ev events
			err := retry.Do(ctx, fails(10, errFlaky).op, tt.p.WithClock(clk), retry.WithHooks(ev.hooks()))
			require.ErrorIs(t, err, errFlaky)
			require.Empty(t, ev.retries)
			require.Len(t, ev.dones, 1)
		})
	}
}

func TestSlogHooks(t *testing.T) {
	clk := retrytest.NewClock()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hooks := retry.SlogHooks(logger, slog.LevelWarn)
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), fails(10, errFlaky).op, policy.Default().WithMaxAttempts(3).WithClock(clk), retry.WithHooks(hooks))
	}()
	clk.Step(t)
	clk.Step(t)
	require.ErrorIs(t, result(t, done), retry.ErrExhausted)

	var records []map[string]any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var r map[string]any
		require.NoError(t, dec.Decode(&r))
		records = append(records, r)
	}
	require.Len(t, records, 3, "two retries and the give-up; none after the final attempt")
	for i, r := range records[:2] {
		require.Equal(t, "WARN", r["level"])
		require.Equal(t, "retry: waiting", r["msg"])
		require.EqualValues(t, i+1, r["attempt"])
		require.EqualValues(t, (10*time.Second)<<i, r["delay"])
		require.Equal(t, "flaky", r["error"])
	}
	last := records[2]
	require.Equal(t, "retry: gave up", last["msg"])
	require.EqualValues(t, 3, last["attempts"])
	require.EqualValues(t, 30*time.Second, last["elapsed"])
	require.Equal(t, "retry: gave up after 3 attempts in 30s: flaky", last["error"])
}

func TestSlogHooksQuietOnFirstTrySuccess(t *testing.T) {
	var buf bytes.Buffer
	hooks := retry.SlogHooks(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo)
	require.NoError(t, retry.Do(context.Background(), succeed, policy.Default(), retry.WithHooks(hooks)))
	require.Empty(t, buf.String())
}

func TestFirstTryAllocationsWithHooksAndJitter(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	var buf bytes.Buffer
	hooks := retry.WithHooks(retry.SlogHooks(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo))
	p := policy.Default().WithJitter(backoff.Jitter{Kind: backoff.Full})
	ctx := context.Background()
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = retry.Do(ctx, succeed, p, hooks) }))
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = retry.DoValue(ctx, succeedValue, p, hooks) }))
}

type ctxKey struct{}

func TestOnDoneOnceForEveryCallEvenRefusedOnes(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, "request-42")
	tests := []struct {
		name string
		run  func(opt retry.Option) error
	}{
		{"invalid policy", func(o retry.Option) error { return retry.Do(ctx, succeed, policy.Constant(-1), o) }},
		{"nil fn", func(o retry.Option) error { return retry.Do(ctx, nil, policy.Default(), o) }},
		{"nil fn in Loop", func(o retry.Option) error { return retry.Loop(ctx, nil, policy.Default(), o) }},
		{"nil fn in DoValue", func(o retry.Option) error {
			_, err := retry.DoValue[int](ctx, nil, policy.Default(), o)
			return err
		}},
		{"cancelled before the first attempt", func(o retry.Option) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			return retry.Do(cctx, succeed, policy.Default(), o)
		}},
		{"first-try success", func(o retry.Option) error { return retry.Do(ctx, succeed, policy.Default(), o) }},
		{"permanent at once", func(o retry.Option) error {
			return retry.Do(ctx, func(context.Context) error { return retry.Permanent(errFlaky) }, policy.Default(), o)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []retry.DoneEvent
			var vals []any
			err := tt.run(retry.WithHooks(&retry.Hooks{OnDone: func(ctx context.Context, e retry.DoneEvent) {
				got = append(got, e)
				vals = append(vals, ctx.Value(ctxKey{}))
			}}))
			require.Len(t, got, 1, "OnDone exactly once")
			require.Equal(t, err, got[0].Err)
			require.Equal(t, "request-42", vals[0], "the hook gets the call's context")
		})
	}
	t.Run("nil context", func(t *testing.T) {
		var calls int
		//lint:ignore SA1012 a nil context is the bad input under test
		err := retry.Do(nil, succeed, policy.Default(), retry.WithHooks(&retry.Hooks{OnDone: func(ctx context.Context, e retry.DoneEvent) {
			require.NotNil(t, ctx)
			calls++
		}}))
		require.ErrorIs(t, err, policy.ErrInvalid)
		require.Equal(t, 1, calls)
	})
}

func TestOnRetryGetsTheCallsContext(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, "trace-7")
	var vals []any
	err := retry.Do(ctx, fails(2, errFlaky).op, policy.Constant(0).WithClock(newVClock()), retry.WithHooks(&retry.Hooks{
		OnRetry: func(ctx context.Context, e retry.RetryEvent) { vals = append(vals, ctx.Value(ctxKey{})) },
	}))
	require.NoError(t, err)
	require.Equal(t, []any{"trace-7", "trace-7"}, vals)
}

func TestSlogHooksCarryTheErrorValueAndContext(t *testing.T) {
	var buf bytes.Buffer
	h := &ctxHandler{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})}
	ctx := context.WithValue(context.Background(), ctxKey{}, "req-9")
	err := retry.Do(ctx, fails(5, &codeError{Code: 503}).op, policy.Constant(0).WithMaxAttempts(2).WithClock(newVClock()),
		retry.WithHooks(retry.SlogHooks(slog.New(h), slog.LevelWarn)))
	require.ErrorIs(t, err, retry.ErrExhausted)
	var recs []map[string]any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var m map[string]any
		require.NoError(t, dec.Decode(&m))
		recs = append(recs, m)
	}
	require.Len(t, recs, 2)
	require.Equal(t, "retry: waiting", recs[0]["msg"])
	// The JSON handler writes an error value with its Error method; the
	// handler before it saw the value itself (checked below), and the
	// call's context.
	require.Equal(t, "status 503", recs[0]["error"])
	require.Equal(t, "req-9", recs[0]["req"])
	require.Equal(t, "retry: gave up", recs[1]["msg"])
	require.Equal(t, "WARN", recs[1]["level"])
	require.Equal(t, "req-9", recs[1]["req"])
	require.Equal(t, true, h.sawErrorValue, "slog.Any, not slog.String")
}

func TestSlogHooksLoopShutdownIsNotAFailure(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clk := retrytest.NewClock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, succeed, policy.Constant(time.Second).WithClock(clk), retry.WithHooks(retry.SlogHooks(l, slog.LevelWarn)))
	}()
	clk.Step(t)
	clk.NextWait(t)
	cancel()
	require.ErrorIs(t, result(t, done), context.Canceled)
	out := buf.String()
	require.NotContains(t, out, "gave up")
	require.Contains(t, out, `"level":"DEBUG","msg":"retry: stopped"`)
	// The pauses after healthy runs are not retries: nothing at warn.
	require.Contains(t, out, `"level":"DEBUG","msg":"retry: waiting"`)
	require.NotContains(t, out, `"level":"WARN"`)
}

// codeError is an error with an exported field, so that a JSON handler
// shows whether it got the value or a string.
type codeError struct{ Code int }

func (e *codeError) Error() string { return "status " + strconv.Itoa(e.Code) }

// ctxHandler adds the request value from the context to each record and
// notes whether an "error" attribute arrived as a value.
type ctxHandler struct {
	slog.Handler
	sawErrorValue bool
}

func (h *ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" && a.Value.Kind() == slog.KindAny {
			_, h.sawErrorValue = a.Value.Any().(error)
		}
		return true
	})
	if v, ok := ctx.Value(ctxKey{}).(string); ok {
		r.AddAttrs(slog.String("req", v))
	}
	return h.Handler.Handle(ctx, r)
}

func TestEveryWithHooksIsTold(t *testing.T) {
	var told []string
	h := func(name string) *retry.Hooks {
		return &retry.Hooks{
			OnRetry: func(context.Context, retry.RetryEvent) { told = append(told, name+" retry") },
			OnDone:  func(context.Context, retry.DoneEvent) { told = append(told, name+" done") },
		}
	}
	onlyDone := &retry.Hooks{OnDone: func(context.Context, retry.DoneEvent) { told = append(told, "c done") }}
	err := retry.Do(context.Background(), fails(1, errFlaky).op, policy.Constant(0),
		retry.WithHooks(h("a")), retry.WithHooks(nil), retry.WithHooks(h("b")), retry.WithHooks(onlyDone))
	require.NoError(t, err)
	require.Equal(t, []string{"a retry", "b retry", "a done", "b done", "c done"}, told, "each Hooks in the order given; a nil one is skipped")
}

// TestZeroHooksChangeNothing: a Hooks with no function observes nothing, so
// the call runs as without it: an unobserved call's Elapsed is the same.
func TestZeroHooksChangeNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		run := func(opts ...retry.Option) *retry.Error {
			in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{
				{Fault: retrytest.Fault{Err: errFlaky}, Times: 2}, {Fault: retrytest.Fault{Err: errFlaky, Hint: time.Hour}},
			}})
			require.NoError(t, err)
			err = retry.Do(context.Background(), retrytest.Wrap(in, succeed), policy.Constant(time.Second), opts...)
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			require.ErrorIs(t, err, retry.ErrHintTooLong)
			return re
		}
		plain, zero := run(), run(retry.WithHooks(&retry.Hooks{}))
		require.Equal(t, plain.Error(), zero.Error())
		require.Equal(t, plain.Elapsed, zero.Elapsed)
	})
}

// TestSlogHooksLoopDeadlineIsNotAFailure: a Loop ended by its context's
// deadline, during a run or because its next pause would pass it, is
// stopped, not given up; a Do ended by its deadline still gave up.
func TestSlogHooksLoopDeadlineIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		hooks := retry.WithHooks(retry.SlogHooks(l, slog.LevelWarn))
		for _, run := range []time.Duration{0, 2 * time.Second} { // ends in a pause; ends in a run
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := retry.Loop(ctx, func(ctx context.Context) error {
				time.Sleep(run)
				return ctx.Err()
			}, policy.Constant(time.Second), hooks)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
		out := buf.String()
		require.NotContains(t, out, "gave up")
		require.Equal(t, 2, strings.Count(out, `"level":"DEBUG","msg":"retry: stopped"`), out)

		// A Do ended by its deadline gave up, even when the operation's own
		// error says context.Canceled.
		for _, opErr := range []error{errFlaky, fmt.Errorf("upstream: %w", context.Canceled)} {
			buf.Reset()
			ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
			err := retry.Do(ctx, func(context.Context) error {
				time.Sleep(3 * time.Second)
				return opErr
			}, policy.Constant(time.Second), hooks)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Contains(t, buf.String(), `"level":"WARN","msg":"retry: gave up"`, "%v", opErr)
		}
	})
}
