//go:build go1.25

package retrytest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// forever is a plan that gives every call f.
func forever(f retrytest.Fault) retrytest.Plan {
	return retrytest.Plan{Steps: []retrytest.Step{{Fault: f}}}
}

func TestWrapFailsThreeTimesThenCallsThrough(t *testing.T) {
	in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Times: 3}, {}}})
	calls := 0
	op := retrytest.Wrap(in, func(context.Context) error { calls++; return nil })
	clk := retrytest.NewClock()
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op, policy.Default().WithClock(clk)) }()
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		require.Equal(t, want, clk.Step(t))
	}
	require.NoError(t, <-done)
	require.Equal(t, 1, calls, "only the fourth attempt reached the operation")
	require.Equal(t, retrytest.Counts{Calls: 4, Injected: 3, Errors: 3}, in.Counts())
}

func TestWrapValue(t *testing.T) {
	in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown}, Times: 1}, {}}})
	get := retrytest.WrapValue(in, func(context.Context) (string, error) { return "hello", nil })
	v, err := get(context.Background())
	require.ErrorIs(t, err, errDown)
	require.Empty(t, v)
	v, err = get(context.Background())
	require.NoError(t, err)
	require.Equal(t, "hello", v)
}

func TestWrapHintIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errDown, Hint: 7 * time.Second}, Times: 1}, {}}})
		start := time.Now()
		err := retry.Do(context.Background(), retrytest.Wrap(in, func(context.Context) error { return nil }), policy.Constant(time.Second))
		require.NoError(t, err)
		require.Equal(t, 7*time.Second, time.Since(start), "the hint, not the policy's 1s")
	})
}

func TestWrapOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault retrytest.Fault
		is    error
		msg   string
	}{
		{"an error", retrytest.Fault{Err: errDown}, errDown, "down"},
		{"a reset", retrytest.Fault{Reset: true}, syscall.ECONNRESET, "read tcp: read: connection reset by peer"},
		{"an HTTP status", retrytest.Fault{Status: 503}, nil, "retrytest: a plain operation cannot answer with HTTP status 503"},
		{"a partial response", retrytest.Fault{Partial: true, Truncate: true}, nil, "retrytest: a plain operation has no response for a Partial fault to break"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			err := retrytest.Wrap(mustNew(t, forever(tc.fault)), func(context.Context) error { called = true; return nil })(context.Background())
			require.EqualError(t, err, tc.msg)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.False(t, called)
		})
	}
}

func TestWrapPanics(t *testing.T) {
	op := retrytest.Wrap(mustNew(t, forever(retrytest.Fault{Panic: "boom"})), func(context.Context) error { return nil })
	require.PanicsWithValue(t, "boom", func() { _ = retry.Do(context.Background(), op, policy.Constant(0)) })
}

func TestWrapLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Latency: 3 * time.Second}))
		op := retrytest.Wrap(in, func(context.Context) error { return errDown })
		start := time.Now()
		require.ErrorIs(t, op(context.Background()), errDown, "latency alone, then the operation")
		require.Equal(t, 3*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		require.ErrorIs(t, op(ctx), context.DeadlineExceeded)
		require.Equal(t, time.Second, time.Since(start), "the context cut the latency short")
	})
}

func TestWrapLatencyOnTheMockClock(t *testing.T) {
	clk := retrytest.NewClock()
	p := forever(retrytest.Fault{Latency: 5 * time.Second, Err: errDown})
	p.Clock = clk
	op := retrytest.Wrap(mustNew(t, p), func(context.Context) error { return nil })
	done := make(chan error, 1)
	go func() { done <- op(context.Background()) }()
	require.Equal(t, 5*time.Second, clk.Step(t))
	require.ErrorIs(t, <-done, errDown)
}

func TestWrapStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Stall: true}))
		op := retrytest.Wrap(in, func(context.Context) error { return nil })
		p := policy.Constant(0).WithMaxAttempts(2).WithAttemptTimeout(time.Minute)
		start := time.Now()
		err := retry.Do(context.Background(), op, p)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.Equal(t, 2*time.Minute, time.Since(start), "each stall lasted until its attempt timed out")

		done := make(chan error, 1)
		go func() { done <- op(context.Background()) }()
		synctest.Wait()
		in.Close()
		require.ErrorIs(t, <-done, retrytest.ErrClosed)
		require.NoError(t, op(context.Background()), "a closed injector injects nothing")
	})
}

func TestWrapNil(t *testing.T) {
	err := retrytest.Wrap(nil, func(context.Context) error { return nil })(context.Background())
	require.EqualError(t, err, "retrytest: nil *Injector (New returned an error?)")
	err = retrytest.Wrap(mustNew(t, forever(retrytest.Fault{})), nil)(context.Background())
	require.EqualError(t, err, "retrytest: nil function")
	_, err = retrytest.WrapValue[int](nil, nil)(context.Background())
	require.Error(t, err)
}

// A Loop that must ride out a broker outage: the injector is switched on
// for the outage and off for the recovery, while the Loop runs.
func TestLoopRidesOutAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Err: errors.New("broker unavailable")}))
		in.SetEnabled(false)
		var consumed atomic.Int64
		consume := retrytest.Wrap(in, func(context.Context) error { consumed.Add(1); return nil })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- retry.Loop(ctx, consume, policy.Exponential(time.Second).WithCap(8*time.Second)) }()

		time.Sleep(10 * time.Second) // virtual: runs every second
		before := consumed.Load()
		in.SetEnabled(true) // the outage
		time.Sleep(time.Minute)
		require.Equal(t, before, consumed.Load(), "nothing consumed during the outage")
		in.SetEnabled(false) // the recovery
		time.Sleep(30 * time.Second)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Greater(t, consumed.Load(), before+20, "consuming again, every second after the first success")
		require.Positive(t, in.Counts().Injected)
	})
}

func TestSwitchingOffLeavesAStallToItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Stall: true}))
		op := retrytest.Wrap(in, func(context.Context) error { return nil })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- op(ctx) }()
		synctest.Wait()
		in.SetEnabled(false)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("the stall ended when the injector was switched off: %v", err)
		default:
		}
		require.NoError(t, op(context.Background()), "new calls go through")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}
