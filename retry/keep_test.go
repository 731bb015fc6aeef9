//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

func returnCtx(ctx context.Context) (context.Context, error) { return ctx, nil }

// TestDoValueKeepsTheReturnedAttemptsContext: the context of the attempt
// whose value DoValue returns stays alive until its own timeout.
func TestDoValueKeepsTheReturnedAttemptsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Second)
		actx, err := retry.DoValue(context.Background(), returnCtx, p)
		require.NoError(t, err)
		require.NoError(t, actx.Err(), "alive when DoValue returns")
		time.Sleep(999 * time.Millisecond)
		require.NoError(t, actx.Err(), "alive until its own timeout")
		time.Sleep(time.Millisecond)
		synctest.Wait() // the timeout's own goroutine cancels it
		require.ErrorIs(t, actx.Err(), context.DeadlineExceeded, "ended at its own timeout")
	})
}

// TestDoValueReturnedContextEndsWithTheCallers: the kept context still ends
// with the caller's.
func TestDoValueReturnedContextEndsWithTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Hour)
		actx, err := retry.DoValue(ctx, returnCtx, p)
		require.NoError(t, err)
		require.NoError(t, actx.Err())
		cancel()
		require.ErrorIs(t, actx.Err(), context.Canceled)
	})
}

// TestDoValueCancelsTheContextsOfRetriedAttempts: a failed attempt's
// context is cancelled as soon as the call waits after it; the last one,
// returned with the give-up, is kept.
func TestDoValueCancelsTheContextsOfRetriedAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ctxs []context.Context
		var atWait []error
		hooks := retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) {
			atWait = append(atWait, ctxs[len(ctxs)-1].Err())
		}})
		op := func(ctx context.Context) (context.Context, error) {
			ctxs = append(ctxs, ctx)
			return ctx, errFlaky
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Hour).WithMaxAttempts(3)
		last, err := retry.DoValue(context.Background(), op, p, hooks)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.Len(t, ctxs, 3)
		require.Equal(t, []error{context.Canceled, context.Canceled}, atWait, "cancelled before each wait starts")
		require.Same(t, ctxs[2], last)
		require.NoError(t, last.Err(), "the context of the value returned")
	})
}

// TestDoCancelsEveryAttemptsContext: Do returns no value, so no attempt's
// context outlives it.
func TestDoCancelsEveryAttemptsContext(t *testing.T) {
	var actx context.Context
	err := retry.Do(context.Background(), func(ctx context.Context) error { actx = ctx; return nil },
		policy.Constant(0).WithAttemptTimeout(time.Hour))
	require.NoError(t, err)
	require.ErrorIs(t, actx.Err(), context.Canceled)
}

// TestHedgeValueKeepsTheWinnersContextUnderAnAttemptTimeout: the winner's
// context is never cancelled, the loser's is.
func TestHedgeValueKeepsTheWinnersContextUnderAnAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ctxs []context.Context
		op := func(ctx context.Context) (context.Context, error) {
			mu.Lock()
			ctxs = append(ctxs, ctx)
			n := len(ctxs)
			mu.Unlock()
			if n == 1 {
				<-ctx.Done() // slow: the hedge wins
				return nil, ctx.Err()
			}
			return ctx, nil
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		won, err := retry.HedgeValue(context.Background(), op, p, nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Len(t, ctxs, 2)
		require.Same(t, ctxs[1], won)
		require.ErrorIs(t, ctxs[0].Err(), context.Canceled, "the loser's")
		require.NoError(t, won.Err(), "the winner's")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.ErrorIs(t, won.Err(), context.DeadlineExceeded, "until its own timeout")
	})
}

// TestHedgeValueWinnersContextEndsAtTheCallersDeadline: a caller's deadline
// shorter than the attempt timeout ends the winner's context when it
// passes, though the call has returned and the caller's context is no
// longer watched.
func TestHedgeValueWinnersContextEndsAtTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		op := func(ctx context.Context) (context.Context, error) { return ctx, nil }
		p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		won, err := retry.HedgeValue(ctx, op, p, nil)
		require.NoError(t, err)
		d, ok := won.Deadline()
		require.True(t, ok)
		want, _ := ctx.Deadline()
		require.Equal(t, want, d, "the winner reports the caller's deadline")
		require.NoError(t, won.Err())
		time.Sleep(time.Second)
		synctest.Wait()
		require.ErrorIs(t, won.Err(), context.DeadlineExceeded, "and ends at it")
	})
}

// TestHedgeValueCancelsTheFailedRoundsContext: the context of a round's
// failure, whose value a later round replaces, ends when the call waits.
func TestHedgeValueCancelsTheFailedRoundsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ctxs []context.Context
		op := func(ctx context.Context) (context.Context, error) {
			ctxs = append(ctxs, ctx)
			if len(ctxs) == 1 {
				return ctx, errFlaky
			}
			return ctx, nil
		}
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Minute).
			WithHedging(policy.Hedging{Delay: time.Hour})
		won, err := retry.HedgeValue(context.Background(), op, p, nil)
		require.NoError(t, err)
		require.Len(t, ctxs, 2)
		require.ErrorIs(t, ctxs[0].Err(), context.Canceled)
		require.NoError(t, won.Err())
	})
}

// TestAttemptTimeoutMatchesDeadlineExceeded: whatever the operation
// returns when its own timeout cut it off.
func TestAttemptTimeoutMatchesDeadlineExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errStream := errors.New("stream closed")
		err := retry.Do(context.Background(), func(ctx context.Context) error {
			<-ctx.Done()
			return errStream // not the context's error, as gRPC's status errors are not
		}, policy.Constant(0).WithAttemptTimeout(time.Second).WithMaxAttempts(2))
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.ErrorIs(t, err, errStream)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestNoLeakWhenDoValueKeepsAContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	for range 10 {
		_, err := retry.DoValue(ctx, returnCtx, policy.Constant(0).WithAttemptTimeout(time.Hour))
		require.NoError(t, err)
	}
	cancel()
	goleak.VerifyNone(t)
}

// TestDoValueUnwatchedKeptContextsHoldNothing: under a long attempt
// timeout, the kept contexts of successful DoValue calls that nothing
// watched are given back once dropped, as Do's are, rather than held until
// their timeouts fire. Each once held its timer and context, about 310 B.
func TestDoValueUnwatchedKeptContextsHoldNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("memory in bytes is only meaningful without -race")
	}
	p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Hour)
	ctx, cancel := context.WithCancel(context.Background()) // long-lived: ends after the measure
	defer cancel()
	for _, tt := range []struct {
		name string
		call func()
	}{
		{"Do", func() { require.NoError(t, retry.Do(ctx, succeed, p)) }},
		{"DoValue", func() {
			v, err := retry.DoValue(ctx, succeedValue, p)
			require.NoError(t, err)
			require.Equal(t, 42, v)
		}},
	} {
		for range 1000 {
			tt.call()
		}
		before := heapAfterGC()
		const calls = 100_000
		for range calls {
			tt.call()
		}
		grown := heapAfterGC() - before
		t.Logf("%s: %d calls under a 1h attempt timeout: heap %+d B", tt.name, calls, grown)
		require.Less(t, grown, int64(calls*4), "%s: memory held per call after it returned", tt.name)
	}

	// A kept context that the operation watched holds its timer until it
	// ends: here, until the caller's context does.
	watch := func(ctx context.Context) (int, error) { _ = ctx.Done(); return 42, nil }
	const calls = 10_000
	watched := func(ctx context.Context) {
		for range calls {
			_, err := retry.DoValue(ctx, watch, p)
			require.NoError(t, err)
		}
	}
	warm, stop := context.WithCancel(context.Background())
	watched(warm) // the runtime's heap of timers grows to hold them, and stays grown
	stop()
	before := heapAfterGC()
	watched(ctx)
	held := heapAfterGC() - before
	cancel()
	freed := heapAfterGC() - before
	t.Logf("watched: %d calls: heap %+d B, and %+d B once the caller's context ended", calls, held, freed)
	require.Greater(t, held, int64(calls*100), "each watched context holds its timer")
	// The runtime drops stopped timers from its heap lazily, up to a
	// quarter of them at a time, so some may linger a while.
	require.Less(t, freed, held/2, "until it ends")
}

// heapAfterGC returns the bytes of live heap once the garbage is collected.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

type keyT struct{}

// TestDoValueKeptContextAnswersAsADeadlineContext: the kept context of an
// attempt under the attempt timeout answers as context.WithDeadline's
// would, whether the operation watched it or not, and whenever the caller
// first asks.
func TestDoValueKeptContextAnswersAsADeadlineContext(t *testing.T) {
	for _, watched := range []bool{false, true} {
		for _, ask := range []string{"Done", "Err", "Cause", "derived"} {
			t.Run(fmt.Sprintf("watched %v, %s", watched, ask), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					parent, cancel := context.WithCancel(context.WithValue(context.Background(), keyT{}, "v"))
					defer cancel()
					p := policy.Constant(time.Millisecond).WithAttemptTimeout(time.Second)
					start := time.Now()
					actx, err := retry.DoValue(parent, func(ctx context.Context) (context.Context, error) {
						if watched {
							_ = ctx.Done()
						}
						return ctx, nil
					}, p)
					require.NoError(t, err)
					require.Equal(t, "v", actx.Value(keyT{}), "the caller's values")
					d, ok := actx.Deadline()
					require.True(t, ok)
					require.Equal(t, start.Add(time.Second), d)
					ended := func() error {
						switch ask {
						case "Done":
							select {
							case <-actx.Done():
								return actx.Err()
							default:
								return nil
							}
						case "Err":
							return actx.Err()
						case "Cause":
							return context.Cause(actx)
						}
						derived, stop := context.WithCancel(actx)
						defer stop()
						synctest.Wait()
						return done(derived)
					}
					time.Sleep(time.Second - time.Nanosecond)
					synctest.Wait()
					require.NoError(t, ended(), "alive until its timeout")
					time.Sleep(time.Nanosecond)
					synctest.Wait()
					require.ErrorIs(t, ended(), context.DeadlineExceeded, "ended at its timeout")
					require.ErrorIs(t, context.Cause(actx), context.DeadlineExceeded)
				})
			})
		}
	}
}

// done returns ctx's error once its Done channel is closed, or nil.
func done(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}

// TestDoValueKeptContextFollowsTheMockClock: a kept context ends at its
// timeout on the policy's clock, when that clock makes contexts.
func TestDoValueKeptContextFollowsTheMockClock(t *testing.T) {
	for _, watch := range []bool{false, true} {
		clk := retrytest.NewClock()
		p := policy.Constant(time.Second).WithAttemptTimeout(5 * time.Second).WithClock(clk)
		actx, err := retry.DoValue(context.Background(), returnCtx, p)
		require.NoError(t, err)
		d, _ := actx.Deadline()
		require.Equal(t, clk.Now().Add(5*time.Second), d, "the deadline in mock time")
		var doneCh <-chan struct{}
		if watch {
			doneCh = actx.Done()
		}
		clk.Add(5*time.Second - time.Nanosecond)
		require.NoError(t, actx.Err(), "watched %v: alive until its timeout", watch)
		clk.Add(time.Nanosecond)
		if watch {
			<-doneCh
		}
		require.ErrorIs(t, actx.Err(), context.DeadlineExceeded, "watched %v", watch)
		<-actx.Done()
	}
}
