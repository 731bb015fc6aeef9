package retry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retry/retrytest"
)

// events records what hooks are told.
type events struct {
	mu      sync.Mutex
	retries []retry.RetryEvent
	dones   []retry.DoneEvent
}

func (e *events) hooks() *retry.Hooks {
	return &retry.Hooks{
		OnRetry: func(ev retry.RetryEvent) { e.mu.Lock(); e.retries = append(e.retries, ev); e.mu.Unlock() },
		OnDone:  func(ev retry.DoneEvent) { e.mu.Lock(); e.dones = append(e.dones, ev); e.mu.Unlock() },
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
		{"budget", 0, policy.Default().WithBudget(policy.NewBudget(0, 0))},
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
