//go:build go1.25

package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// tally counts what the hooks of a call hear, and keeps their order.
type tally struct {
	mu                             sync.Mutex
	attempts, attemptsDone, hedges int
	retries, denials               int
	seq                            []string
	events                         []retry.AttemptEvent // OnAttemptDone's, in the order they came
	done                           []retry.DoneEvent
}

func (k *tally) hooks() *retry.Hooks {
	return &retry.Hooks{
		OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.attempts++
			if e.Hedge {
				k.hedges++
			}
			k.seq = append(k.seq, fmt.Sprintf("attempt %d", e.Attempt))
			return ctx
		},
		OnAttemptDone: func(_ context.Context, e retry.AttemptEvent) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.attemptsDone++
			k.events = append(k.events, e)
		},
		OnRetry: func(context.Context, retry.RetryEvent) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.retries++
			k.seq = append(k.seq, "wait")
		},
		OnDenied: func(context.Context, retry.RetryEvent) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.denials++
			k.seq = append(k.seq, "denied")
		},
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.done = append(k.done, e)
			k.seq = append(k.seq, "done")
		},
	}
}

// drainedGuard returns a guard with no token left, whose probe of this
// second is spent, and with another call in flight: a call alone in flight
// keeps its retries.
func drainedGuard(t *testing.T) *policy.Guard {
	g := policy.NewGuard(1, 1)
	drain(g)
	protocol(g).Allow(time.Now())
	busy(t, g)
	return g
}

// TestHooksCountTheAttemptsUnderADrainedGuard is the scenario of a guard
// that denies every retry: the hooks say a wait announced, a retry denied
// after it, and count one attempt, the one that ran.
func TestHooksCountTheAttemptsUnderADrainedGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k tally
		op := fails(100, errFlaky)
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(4).WithGuard(drainedGuard(t))
		start := time.Now()
		err := retry.Do(context.Background(), op.op, p, retry.WithHooks(k.hooks()))
		require.ErrorIs(t, err, retry.ErrThrottled)
		require.Equal(t, 300*time.Millisecond, time.Since(start), "denied at 100ms, 200ms and 300ms: the last retry the limit allows")
		require.EqualValues(t, 1, op.calls.Load(), "the operation ran once")
		require.Equal(t, 1, k.attempts, "OnAttempt: the attempts that ran")
		require.Equal(t, 1, k.attemptsDone)
		require.Equal(t, 3, k.retries, "three waits announced")
		require.Equal(t, 3, k.denials, "each followed by a denied retry")
		require.Equal(t, []string{"attempt 1", "wait", "denied", "wait", "denied", "wait", "denied", "done"}, k.seq)
		require.Len(t, k.done, 1)
		require.Equal(t, 1, k.done[0].Attempts)
		require.Equal(t, 3, k.done[0].Denied)
	})
}

// TestHooksCountTheAttemptsWhenTheGuardAdmitsLater: denied twice, then the
// probe of the next second goes through.
func TestHooksCountTheAttemptsWhenTheGuardAdmitsLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k tally
		op := fails(1, errFlaky)
		p := policy.Constant(400 * time.Millisecond).WithMaxAttempts(5).WithGuard(drainedGuard(t))
		require.NoError(t, retry.Do(context.Background(), op.op, p, retry.WithHooks(k.hooks())))
		require.EqualValues(t, 2, op.calls.Load())
		require.Equal(t, []string{"attempt 1", "wait", "denied", "wait", "denied", "wait", "attempt 2", "done"}, k.seq)
		require.Equal(t, 2, k.attempts)
		require.Equal(t, 2, k.done[0].Attempts)
		require.Equal(t, 2, k.done[0].Denied)
		require.Equal(t, retry.AttemptEvent{Attempt: 2, Wait: 1200 * time.Millisecond}, k.events[1],
			"the second attempt comes after three waits of 400ms, the denied ones included")
	})
}

// TestHooksCountTheRunsOfALoop: under a guard that denies most retries,
// OnAttempt is called once per run, and every announced wait is followed by
// a run or a denial.
func TestHooksCountTheRunsOfALoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k tally
		op := fails(1000, errFlaky)
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		p := policy.Constant(100 * time.Millisecond).WithGuard(drainedGuard(t))
		err := retry.Loop(ctx, op.op, p, retry.WithHooks(k.hooks()))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		runs := int(op.calls.Load())
		require.Equal(t, 3, runs, "the first run, and the probes at 1s and 2s")
		require.Equal(t, runs, k.attempts)
		require.Equal(t, runs, k.attemptsDone)
		require.Equal(t, runs, k.done[0].Attempts, "DoneEvent.Attempts")
		require.Equal(t, k.done[0].Denied, k.denials)
		require.Positive(t, k.denials)
		require.Equal(t, runs-1+k.denials, k.retries, "each wait announced is followed by a run or a denial")
	})
}

// TestHooksCountTheAttemptsOfAHedgedCall: a round of a first attempt and a
// hedge that both fail, then a round whose first attempt wins.
func TestHooksCountTheAttemptsOfAHedgedCall(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard %v", guarded), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				plan := &attemptPlan{steps: []step{
					{after: 50 * time.Millisecond, err: errFlaky},
					{after: 50 * time.Millisecond, err: errFlaky},
					{after: 5 * time.Millisecond},
				}}
				p := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
				if guarded {
					p = p.WithGuard(policy.NewGuard(100, 1))
				}
				var k tally
				require.NoError(t, retry.Hedge(context.Background(), plan.op, p, retry.WithHooks(k.hooks())))
				synctest.Wait()
				require.Equal(t, 3, plan.starts(), "two in the first round, one in the second")
				require.Equal(t, 3, k.attempts)
				require.Equal(t, 1, k.hedges)
				require.Equal(t, 3, k.attemptsDone)
				require.Equal(t, 3, k.done[0].Attempts)
				require.Equal(t, 1, k.done[0].Hedges)
				require.Equal(t, []string{"attempt 1", "attempt 2", "wait", "attempt 3", "done"}, k.seq)
				require.Equal(t, []retry.AttemptEvent{
					{Attempt: 1, Err: errFlaky, Duration: 50 * time.Millisecond},
					{Attempt: 2, Hedge: true, Wait: 10 * time.Millisecond, Err: errFlaky, Duration: 50 * time.Millisecond},
					{Attempt: 3, Wait: time.Second, Duration: 5 * time.Millisecond},
				}, k.events)
			})
		})
	}
}

// TestOnAttemptGivesTheAttemptItsContext: each Hooks's OnAttempt gets the
// context the one before returned, the operation runs with the last, and
// each OnAttemptDone gets its own Hooks's.
func TestOnAttemptGivesTheAttemptItsContext(t *testing.T) {
	type key string
	var got []string
	h := func(name string) *retry.Hooks {
		return &retry.Hooks{
			OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
				return context.WithValue(ctx, key(name), fmt.Sprintf("%s%d", name, e.Attempt))
			},
			OnAttemptDone: func(ctx context.Context, e retry.AttemptEvent) {
				a, _ := ctx.Value(key("a")).(string)
				b, _ := ctx.Value(key("b")).(string)
				got = append(got, fmt.Sprintf("%s done: a=%s b=%s err=%v", name, a, b, e.Err))
			},
		}
	}
	calls := 0
	op := func(ctx context.Context) error {
		calls++
		got = append(got, fmt.Sprintf("op: a=%v b=%v", ctx.Value(key("a")), ctx.Value(key("b"))))
		if calls == 1 {
			return errFlaky
		}
		return nil
	}
	require.NoError(t, retry.Do(context.Background(), op, policy.Constant(0), retry.WithHooks(h("a")), retry.WithHooks(h("b"))))
	require.Equal(t, []string{
		"op: a=a1 b=b1", "a done: a=a1 b= err=flaky", "b done: a=a1 b=b1 err=flaky",
		"op: a=a2 b=b2", "a done: a=a2 b= err=<nil>", "b done: a=a2 b=b2 err=<nil>",
	}, got)
}

// TestManyHooksAreAllTold: a call given more Hooks than it keeps in place
// tells every one of them, in order, each OnAttemptDone with the context its
// own OnAttempt returned.
func TestManyHooksAreAllTold(t *testing.T) {
	type key int
	const hooks = 12
	var got []string
	var opts []retry.Option
	for i := range hooks {
		opts = append(opts, retry.WithHooks(&retry.Hooks{
			OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
				return context.WithValue(ctx, key(i), e.Attempt)
			},
			OnAttemptDone: func(ctx context.Context, e retry.AttemptEvent) {
				if ctx.Value(key(i)) != e.Attempt || ctx.Value(key(i+1)) != nil {
					t.Errorf("hook %d: attempt %d done with the wrong context", i, e.Attempt)
				}
			},
			OnDone: func(context.Context, retry.DoneEvent) { got = append(got, fmt.Sprint(i)) },
		}))
	}
	runs := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		runs++
		if ctx.Value(key(hooks-1)) != runs {
			t.Errorf("run %d: the operation misses the last hook's context", runs)
		}
		if runs < 3 {
			return errors.New("flaky")
		}
		return nil
	}, policy.Constant(0), opts...)
	require.NoError(t, err)
	require.Equal(t, 3, runs)
	want := make([]string, hooks)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	require.Equal(t, want, got)
}

// TestFirstTryWithTwoHooksAllocatesNothing: several WithHooks are kept in
// place, not joined.
func TestFirstTryWithTwoHooksAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	n := 0
	a := retry.WithHooks(&retry.Hooks{OnDone: func(context.Context, retry.DoneEvent) { n++ }})
	b := retry.WithHooks(&retry.Hooks{OnDone: func(context.Context, retry.DoneEvent) { n++ }})
	ctx, p := context.Background(), policy.Default()
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = retry.Do(ctx, succeed, p, a, b) }))
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = retry.DoValue(ctx, succeedValue, p, a, b) }))
	require.Positive(t, n)
}

// TestSlogHooksLogDeniedRetries: each wait is logged, and so is each retry
// the guard denied after it.
func TestSlogHooksLogDeniedRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(3).WithGuard(drainedGuard(t))
		err := retry.Do(context.Background(), fails(100, errFlaky).op, p, retry.WithHooks(retry.SlogHooks(logger, slog.LevelWarn)))
		require.ErrorIs(t, err, retry.ErrThrottled)
		require.Equal(t, strings.Join([]string{
			`level=WARN msg="retry: waiting" attempt=1 delay=100ms elapsed=0s error=flaky`,
			`level=WARN msg="retry: denied" attempt=1 delay=100ms elapsed=0s`,
			`level=WARN msg="retry: waiting" attempt=1 delay=100ms elapsed=100ms error=flaky`,
			`level=WARN msg="retry: denied" attempt=1 delay=100ms elapsed=100ms`,
			`level=WARN msg="retry: gave up" attempts=1 elapsed=200ms error="retry: retries throttled after 1 attempt in 200ms (the guard denied the retry): flaky"`,
			``,
		}, "\n"), buf.String())
	})
}

// TestHooksOrderOfTwoFailuresAndASuccess is the order the Hooks doc gives
// for a call that fails twice and then succeeds.
func TestHooksOrderOfTwoFailuresAndASuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seq []string
		h := &retry.Hooks{
			OnAttempt: func(ctx context.Context, _ retry.AttemptEvent) context.Context {
				seq = append(seq, "OnAttempt")
				return ctx
			},
			OnAttemptDone: func(context.Context, retry.AttemptEvent) { seq = append(seq, "OnAttemptDone") },
			OnRetry:       func(context.Context, retry.RetryEvent) { seq = append(seq, "OnRetry") },
			OnDenied:      func(context.Context, retry.RetryEvent) { seq = append(seq, "OnDenied") },
			OnDone:        func(context.Context, retry.DoneEvent) { seq = append(seq, "OnDone") },
		}
		op := fails(2, errFlaky)
		require.NoError(t, retry.Do(context.Background(), op.op, policy.Constant(time.Second), retry.WithHooks(h)))
		require.Equal(t, []string{
			"OnAttempt", "OnAttemptDone", "OnRetry",
			"OnAttempt", "OnAttemptDone", "OnRetry",
			"OnAttempt", "OnAttemptDone", "OnDone",
		}, seq)
	})
}
