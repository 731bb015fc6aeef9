//go:build go1.25

package retry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// attemptPlan says how each attempt of a hedged test behaves, by the order
// in which the attempts start (from 1): after how long it returns and with
// what error. An attempt whose context is cancelled first returns ctx's
// error at once.
type attemptPlan struct {
	mu        sync.Mutex
	steps     []step
	started   int
	cancelled atomic.Int32 // attempts that returned because their context was done
	returned  atomic.Int32
}

type step struct {
	after time.Duration
	err   error
}

func (a *attemptPlan) op(ctx context.Context) error {
	a.mu.Lock()
	s := a.steps[min(a.started, len(a.steps)-1)]
	a.started++
	a.mu.Unlock()
	defer a.returned.Add(1)
	t := time.NewTimer(s.after)
	defer t.Stop()
	select {
	case <-t.C:
		return s.err
	case <-ctx.Done():
		a.cancelled.Add(1)
		return ctx.Err()
	}
}

func (a *attemptPlan) starts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started
}

func hedged(d time.Duration) policy.Policy {
	return policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: d})
}

func TestHedgeStartsASecondAttemptBesideASlowOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attemptPlan{steps: []step{{after: time.Hour}, {after: 5 * time.Millisecond}}}
		var ev events
		start := time.Now()
		err := retry.Hedge(context.Background(), a.op, hedged(10*time.Millisecond), retry.WithHooks(ev.hooks()))
		require.NoError(t, err)
		require.Equal(t, 15*time.Millisecond, time.Since(start), "the hedge starts after 10ms and answers 5ms later")
		synctest.Wait()
		require.EqualValues(t, 2, a.returned.Load(), "the loser returned")
		require.EqualValues(t, 1, a.cancelled.Load(), "the loser's context was cancelled")
		require.Len(t, ev.dones, 1)
		require.Equal(t, retry.DoneEvent{Attempts: 2, Won: 2, Hedges: 1, Elapsed: 15 * time.Millisecond}, ev.dones[0])
		require.Empty(t, ev.retries, "a hedge is no retry wait")
	})
}

func TestHedgeFastFirstAttemptStartsNoHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attemptPlan{steps: []step{{after: 9 * time.Millisecond}}}
		var ev events
		require.NoError(t, retry.Hedge(context.Background(), a.op, hedged(10*time.Millisecond), retry.WithHooks(ev.hooks())))
		require.Equal(t, 1, a.starts())
		require.Equal(t, retry.DoneEvent{Attempts: 1, Won: 1, Elapsed: 9 * time.Millisecond}, ev.dones[0])
	})
}

func TestHedgeFailureDoesNotEndTheRoundWhileOthersRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first attempt answers after 100ms; the hedge fails at once.
		a := &attemptPlan{steps: []step{{after: 100 * time.Millisecond}, {err: errFlaky}}}
		var ev events
		start := time.Now()
		require.NoError(t, retry.Hedge(context.Background(), a.op, hedged(10*time.Millisecond), retry.WithHooks(ev.hooks())))
		require.Equal(t, 100*time.Millisecond, time.Since(start))
		require.Equal(t, retry.DoneEvent{Attempts: 2, Won: 1, Hedges: 1, Elapsed: 100 * time.Millisecond}, ev.dones[0])
	})
}

func TestHedgePermanentErrorEndsTheCallAtOnce(t *testing.T) {
	errBad := errors.New("bad request")
	for _, tt := range []struct {
		name string
		err  error
		p    policy.Policy
	}{
		{"permanent", retry.Permanent(errBad), hedged(10 * time.Millisecond)},
		{"not retried by the policy", errBad, hedged(10 * time.Millisecond).WithRetryIf(func(err error) bool { return !errors.Is(err, errBad) })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &attemptPlan{steps: []step{{after: time.Hour}, {err: tt.err}}}
				start := time.Now()
				err := retry.Hedge(context.Background(), a.op, tt.p)
				require.Same(t, errBad, err, "the error as it is, without the Permanent mark")
				require.Equal(t, 10*time.Millisecond, time.Since(start), "ended when the hedge failed, not when the first attempt would have")
				synctest.Wait()
				require.EqualValues(t, 1, a.cancelled.Load(), "the first attempt was cancelled")
			})
		})
	}
}

func TestHedgeRoundsRetryWithBackoffAndCountEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each attempt fails after 30ms: the hedge starts at 10ms, both
		// have failed by 40ms, the back-off waits 1s, the next round starts
		// at 1.04s with one attempt left, which fails at 1.07s.
		a := &attemptPlan{steps: []step{{after: 30 * time.Millisecond, err: errFlaky}}}
		var ev events
		start := time.Now()
		err := retry.Hedge(context.Background(), a.op, hedged(10*time.Millisecond).WithMaxAttempts(3), retry.WithHooks(ev.hooks()))
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, errFlaky)
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 3, re.Attempts, "hedges count as attempts")
		require.Equal(t, 3, a.starts())
		require.Equal(t, 1070*time.Millisecond, time.Since(start))
		require.Len(t, ev.retries, 1)
		require.Equal(t, 2, ev.retries[0].Attempt, "the retry comes after two attempts")
		require.Equal(t, time.Second, ev.retries[0].Delay)
		require.Equal(t, 1, ev.dones[0].Hedges)
		require.Zero(t, ev.dones[0].Won)
	})
}

func TestHedgeUpToMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attemptPlan{steps: []step{{after: time.Hour}, {after: time.Hour}, {after: time.Hour}, {after: time.Millisecond}}}
		var ev events
		p := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, MaxInFlight: 3})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := retry.Hedge(ctx, a.op, p, retry.WithHooks(ev.hooks()))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 3, a.starts(), "three side by side, no fourth")
		require.Equal(t, 2, ev.dones[0].Hedges)
	})
}

func TestHedgeNotStartedPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attemptPlan{steps: []step{{after: 50 * time.Millisecond}}}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.NoError(t, retry.Hedge(ctx, a.op, hedged(100*time.Millisecond)))
		require.Equal(t, 1, a.starts())
	})
}

func TestHedgeDeniedByTheGuard(t *testing.T) {
	drained := policy.NewGuard(10, 0.1)
	for range 5 { // five retries that failed leave half the tokens: no hedge allowed
		protocol(drained).Allow(time.Now())
		protocol(drained).Record(true, admit.Failed)
	}
	guard := policy.NewGuard(10, 0.1)
	small := policy.NewGuard(5, 0.1)
	for _, tt := range []struct {
		name   string
		p      policy.Policy
		guard  *policy.Guard // the policy's, or nil
		starts int
		tokens float64
	}{
		{"guard at half", hedged(10 * time.Millisecond).WithGuard(drained), drained, 1, 5.1}, // no hedge; the slow attempt's success adds the ratio below the hedge line
		{"guard full", hedged(10 * time.Millisecond).WithGuard(guard), guard, 2, 9.1},        // the hedge took a token, and won: the ratio comes back
		{"small guard full", hedged(10 * time.Millisecond).WithGuard(small), small, 2, 4.1},  // a guard of fewer than ten tokens hedges too
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &attemptPlan{steps: []step{{after: 50 * time.Millisecond}, {after: time.Millisecond}}}
				require.NoError(t, retry.Hedge(context.Background(), a.op, tt.p))
				require.Equal(t, tt.starts, a.starts())
				if g := tt.guard; g != nil {
					require.InDelta(t, tt.tokens, protocol(g).Tokens(), 1e-9)
				}
			})
		})
	}
}

func TestHedgeInvalidCalls(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"no hedging", retry.Hedge(ctx, succeed, policy.Default())},
		{"nil fn", retry.Hedge(ctx, nil, hedged(time.Millisecond))},
		{"invalid hedge", retry.Hedge(ctx, succeed, policy.Default().WithHedging(policy.Hedging{Delay: -1}))},
		{"a quantile and no guard", retry.Hedge(ctx, succeed, policy.Default().WithHedging(policy.Hedging{Quantile: 0.95}))},
		{"HedgeValue without hedging", func() error {
			_, err := retry.HedgeValue(ctx, succeedValue, policy.Default(), nil)
			return err
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) { require.ErrorIs(t, tt.err, policy.ErrInvalid) })
	}
	err := retry.Hedge(ctx, succeed, policy.Default().WithHedging(policy.Hedging{Delay: time.Millisecond, Quantile: 0.95}))
	require.ErrorContains(t, err, "no guard", "a fixed delay beside the quantile does not make up for the guard")
	require.ErrorContains(t, err, "WithGuard")
	p := policy.Default().WithHedging(policy.Hedging{Quantile: 0.95}).WithGuard(policy.NewGuard(10, 1))
	require.NoError(t, retry.Hedge(ctx, succeed, p), "with a guard")
}

// TestHedgeAfterTheGuardsQuantile: with a Quantile, the hedge delay is the
// guard's estimate once it has one, and the fixed Delay before. The guard
// learns from the successes of hedged calls, on the policy's clock, and
// not from those of Do.
func TestHedgeAfterTheGuardsQuantile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 1)
		p := policy.Constant(time.Second).WithGuard(g).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, Quantile: 0.95})
		slow := func() *attemptPlan {
			return &attemptPlan{steps: []step{{after: time.Hour}, {after: 5 * time.Millisecond}}}
		}

		start := time.Now()
		require.NoError(t, retry.Hedge(context.Background(), slow().op, p))
		require.Equal(t, 15*time.Millisecond, time.Since(start), "no estimate yet: the hedge starts after Delay")
		_, ready := protocol(g).Latency(0.95)
		require.False(t, ready, "one sample is no estimate")

		for range 200 {
			require.NoError(t, retry.Do(context.Background(), func(context.Context) error { time.Sleep(time.Millisecond); return nil }, p))
		}
		_, ready = protocol(g).Latency(0.95)
		require.False(t, ready, "Do's successes teach the guard nothing")

		for range 199 { // with the one above, 200 successes: ten lie above the p95
			a := &attemptPlan{steps: []step{{after: 30 * time.Millisecond}}}
			require.NoError(t, retry.Hedge(context.Background(), a.op, p.WithHedging(policy.Hedging{Delay: time.Hour, Quantile: 0.95})))
		}
		est, ready := protocol(g).Latency(0.95)
		require.True(t, ready)
		require.Equal(t, 31457280*time.Nanosecond, est, "the upper edge of the bucket that holds 30ms")

		start = time.Now()
		require.NoError(t, retry.Hedge(context.Background(), slow().op, p))
		require.Equal(t, est+5*time.Millisecond, time.Since(start), "the hedge starts after the estimate")
	})
}

func TestDoIgnoresHedging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attemptPlan{steps: []step{{after: time.Second}}}
		require.NoError(t, retry.Do(context.Background(), a.op, hedged(time.Millisecond)))
		require.Equal(t, 1, a.starts())
	})
}

// resource is a value that must be released exactly once.
type resource struct {
	id       int
	released atomic.Int32
}

func TestHedgeValueDiscardsEveryLosingValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			made []*resource
			n    int
		)
		// Attempt 1 answers after 1h unless cancelled, attempt 2 fails after
		// 15ms with a value, attempt 3 answers at 25ms and wins; attempt 1
		// returns its value even when cancelled, as a response would.
		delays := []time.Duration{time.Hour, 5 * time.Millisecond, 5 * time.Millisecond}
		fn := func(ctx context.Context) (*resource, error) {
			mu.Lock()
			n++
			r := &resource{id: n}
			made = append(made, r)
			d := delays[n-1]
			mu.Unlock()
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return r, ctx.Err()
			}
			if r.id == 2 {
				return r, errFlaky
			}
			return r, nil
		}
		var discarded atomic.Int32
		release := func(r *resource) {
			discarded.Add(1)
			r.released.Add(1)
		}
		p := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, MaxInFlight: 3})
		v, err := retry.HedgeValue(context.Background(), fn, p, release)
		require.NoError(t, err)
		require.Equal(t, 3, v.id)
		synctest.Wait()
		require.Len(t, made, 3)
		require.EqualValues(t, 2, discarded.Load())
		for _, r := range made {
			want := int32(1)
			if r == v {
				want = 0
			}
			require.Equal(t, want, r.released.Load(), "resource %d", r.id)
		}
	})
}

func TestHedgeValueKeepsTheLastFailureAndDiscardsEarlierRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		fn := func(ctx context.Context) (int, error) { return int(n.Add(1)), errFlaky }
		var discarded []int
		var mu sync.Mutex
		p := hedged(10 * time.Millisecond).WithMaxAttempts(3)
		v, err := retry.HedgeValue(context.Background(), fn, p, func(v int) { mu.Lock(); discarded = append(discarded, v); mu.Unlock() })
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.Equal(t, 3, v, "the value of the last attempt")
		require.Equal(t, []int{1, 2}, discarded)
	})
}

// TestNoLeakAfterHedgedLosers runs on a mock clock, outside synctest, so
// that goleak sees the real goroutines: the loser's goroutine is gone once
// its operation has returned.
func TestNoLeakAfterHedgedLosers(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Constant(time.Second).WithClock(clk).WithHedging(policy.Hedging{Delay: time.Second, MaxInFlight: 3})
	var calls atomic.Int32
	loserDone := make(chan struct{}, 2)
	fn := func(ctx context.Context) error {
		if calls.Add(1) < 3 {
			<-ctx.Done()
			loserDone <- struct{}{}
			return ctx.Err()
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- retry.Hedge(context.Background(), fn, p) }()
	require.Equal(t, time.Second, clk.Step(t))
	require.Equal(t, time.Second, clk.Step(t))
	require.NoError(t, result(t, done))
	<-loserDone
	<-loserDone
	goleak.VerifyNone(t)
}

func TestHedgeConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.4)
		p := policy.Exponential(time.Millisecond).WithMaxAttempts(4).
			WithHedging(policy.Hedging{Delay: 20 * time.Millisecond, Quantile: 0.95, MaxInFlight: 3}).
			WithGuard(g)
		var (
			wg       sync.WaitGroup
			ok       atomic.Int32
			attempts atomic.Int32
		)
		for i := range 1000 {
			wg.Go(func() {
				var k atomic.Int32
				err := retry.Hedge(context.Background(), func(ctx context.Context) error {
					attempts.Add(1)
					d := 10 * time.Millisecond
					switch j := k.Add(1); {
					case i%10 == 0 && j == 1:
						d = time.Second
					case i%50 == 1:
						return errFlaky
					}
					select {
					case <-time.After(d):
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}, p)
				if err == nil {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		require.EqualValues(t, 980, ok.Load(), "every call succeeds but those that always fail")
		require.Greater(t, int(attempts.Load()), 1000)
		_, ready := protocol(g).Latency(0.95)
		require.True(t, ready)
	})
}

// TestHedgeValueLeavesTheWinnersContextLive: a value bound to its attempt's
// context, as an HTTP response's body is, stays usable after the call; the
// loser's context is cancelled.
func TestHedgeValueLeavesTheWinnersContextLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		fn := func(ctx context.Context) (context.Context, error) {
			if n.Add(1) == 1 {
				<-ctx.Done()
				return ctx, ctx.Err()
			}
			return ctx, nil
		}
		var lost context.Context
		won, err := retry.HedgeValue(context.Background(), fn, hedged(10*time.Millisecond),
			func(ctx context.Context) { lost = ctx })
		require.NoError(t, err)
		synctest.Wait()
		require.NoError(t, won.Err(), "the winner's context after the call")
		require.ErrorIs(t, lost.Err(), context.Canceled, "the loser's context")

		// Hedge has no value to protect: its attempts' contexts all end.
		var ctxs []context.Context
		var mu sync.Mutex
		require.NoError(t, retry.Hedge(context.Background(), func(ctx context.Context) error {
			mu.Lock()
			ctxs = append(ctxs, ctx)
			mu.Unlock()
			return nil
		}, hedged(10*time.Millisecond)))
		require.Len(t, ctxs, 1)
		require.ErrorIs(t, ctxs[0].Err(), context.Canceled)
	})
}

func TestSlogHooksReportHedges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		hooks := retry.WithHooks(retry.SlogHooks(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo))
		a := &attemptPlan{steps: []step{{after: 30 * time.Millisecond}, {after: time.Hour}}}
		require.NoError(t, retry.Hedge(context.Background(), a.op, hedged(10*time.Millisecond), hooks))
		var rec map[string]any
		require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), buf.String())
		require.Equal(t, "retry: succeeded", rec["msg"])
		require.EqualValues(t, 2, rec["attempts"])
		require.EqualValues(t, 1, rec["hedges"])
		require.EqualValues(t, 1, rec["won"], "the first attempt won, not the hedge")
	})
}

func TestHedgeWithAttemptTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Both attempts hang: the first is cut off at 50ms while the hedge
		// still runs, the hedge at 60ms, which ends the round and the call.
		a := &attemptPlan{steps: []step{{after: time.Hour}}}
		p := hedged(10 * time.Millisecond).WithMaxAttempts(2).WithAttemptTimeout(50 * time.Millisecond)
		start := time.Now()
		err := retry.Hedge(context.Background(), a.op, p)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.Equal(t, 60*time.Millisecond, time.Since(start))
		require.Equal(t, 2, a.starts())
	})
}

// TestHedgeKeepsTheRunningAttemptsErrorWhenTheContextEnds: when ctx ends
// during an attempt, Hedge and HedgeValue end with the error that attempt
// returns, and its value, as Do and DoValue do. Attempt 1 fails at once,
// the call waits 1s, and attempt 2 runs until its context ends at 1.5s,
// then returns an error of its own.
func TestHedgeKeepsTheRunningAttemptsErrorWhenTheContextEnds(t *testing.T) {
	err503 := errors.New("attempt 1: 503")
	errReset := errors.New("attempt 2: connection reset")
	op := func(n *atomic.Int32) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			if i := int(n.Add(1)); i == 1 {
				return i, err503
			}
			<-ctx.Done()
			return 2, errReset
		}
	}
	// No hedge starts: its delay is longer than the call.
	p := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: time.Hour})
	calls := []struct {
		name string
		run  func(context.Context, func(context.Context) (int, error)) (int, error)
	}{
		{"Do", func(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
			return 0, retry.Do(ctx, func(ctx context.Context) error { _, err := fn(ctx); return err }, p)
		}},
		{"Hedge", func(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
			return 0, retry.Hedge(ctx, func(ctx context.Context) error { _, err := fn(ctx); return err }, p)
		}},
		{"DoValue", func(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
			return retry.DoValue(ctx, fn, p)
		}},
		{"HedgeValue", func(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
			return retry.HedgeValue(ctx, fn, p, nil)
		}},
	}
	for _, end := range []struct {
		name  string
		ctx   func() (context.Context, context.CancelFunc)
		cause error
		want  string
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(1500*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, "retry: context canceled after 2 attempts: attempt 2: connection reset"},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 1500*time.Millisecond)
		}, context.DeadlineExceeded, "retry: context deadline exceeded after 2 attempts in 1.5s: attempt 2: connection reset"},
	} {
		for _, call := range calls {
			t.Run(end.name+"/"+call.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := end.ctx()
					defer cancel()
					var n atomic.Int32
					v, err := call.run(ctx, op(&n))
					require.ErrorIs(t, err, end.cause)
					require.ErrorIs(t, err, errReset, "the running attempt's own error")
					require.NotErrorIs(t, err, err503)
					require.EqualError(t, err, end.want)
					if call.name == "DoValue" || call.name == "HedgeValue" {
						require.Equal(t, 2, v, "the value of the attempt whose error is returned")
					}
				})
			})
		}
	}
}

// TestLastErrorSurvivesACancelledAttempt: when ctx ends during an attempt
// that then returns only the context's error, the call's last error is the
// failure before it, in Do, DoValue, Hedge and HedgeValue, whether that
// failure came in an earlier round or in the same round of hedges.
// Attempt 1 fails with a 503; attempt 2 runs until its context ends.
func TestLastErrorSurvivesACancelledAttempt(t *testing.T) {
	err503 := errors.New("attempt 1: 503")
	op := func(n *atomic.Int32, failAfter time.Duration) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			if i := int(n.Add(1)); i == 1 {
				time.Sleep(failAfter)
				return i, err503
			}
			<-ctx.Done()
			return 2, ctx.Err()
		}
	}
	later := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: time.Hour}) // attempt 2 after a wait
	beside := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: 100 * time.Millisecond})
	for _, tt := range []struct {
		name      string
		p         policy.Policy
		failAfter time.Duration
		run       func(context.Context, policy.Policy, func(context.Context) (int, error)) (int, error)
	}{
		{"Do", later, 0, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return 0, retry.Do(ctx, func(ctx context.Context) error { _, err := fn(ctx); return err }, p)
		}},
		{"DoValue", later, 0, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return retry.DoValue(ctx, fn, p)
		}},
		{"Hedge, next round", later, 0, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return 0, retry.Hedge(ctx, func(ctx context.Context) error { _, err := fn(ctx); return err }, p)
		}},
		{"HedgeValue, next round", later, 0, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return retry.HedgeValue(ctx, fn, p, nil)
		}},
		{"Hedge, same round", beside, 200 * time.Millisecond, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return 0, retry.Hedge(ctx, func(ctx context.Context) error { _, err := fn(ctx); return err }, p)
		}},
		{"HedgeValue, same round", beside, 200 * time.Millisecond, func(ctx context.Context, p policy.Policy, fn func(context.Context) (int, error)) (int, error) {
			return retry.HedgeValue(ctx, fn, p, nil)
		}},
	} {
		for _, end := range []struct {
			name  string
			ctx   func() (context.Context, context.CancelFunc)
			cause error
		}{
			{"cancelled", func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(1500*time.Millisecond, cancel)
				return ctx, cancel
			}, context.Canceled},
			{"deadline", func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 1500*time.Millisecond)
			}, context.DeadlineExceeded},
		} {
			t.Run(end.name+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := end.ctx()
					defer cancel()
					var n atomic.Int32
					_, err := tt.run(ctx, tt.p, op(&n, tt.failAfter))
					require.ErrorIs(t, err, end.cause)
					var re *retry.Error
					require.ErrorAs(t, err, &re)
					require.Equal(t, err503, re.Last, "the failure before the cancelled attempt")
					require.Equal(t, 2, re.Attempts)
					require.Equal(t, int32(2), n.Load())
				})
			})
		}
	}
}

// TestHedgeWaitsForItsCancelledAttemptsWhenTheContextEnds: the attempts
// running side by side when ctx ends are cancelled, and the call ends with
// the error of the one that returns last, once it has.
func TestHedgeWaitsForItsCancelledAttemptsWhenTheContextEnds(t *testing.T) {
	errFirst := errors.New("attempt 1: cancelled")
	errSecond := errors.New("attempt 2: cancelled, after a moment of cleanup")
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		fn := func(ctx context.Context) error {
			i := n.Add(1)
			<-ctx.Done()
			if i == 1 {
				return errFirst
			}
			time.Sleep(time.Millisecond)
			return errSecond
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := retry.Hedge(ctx, fn, hedged(10*time.Millisecond))
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, errSecond)
		require.Equal(t, 101*time.Millisecond, time.Since(start), "the call waited for the hedge to return")
		require.EqualValues(t, 2, n.Load())

		// HedgeValue: the context of the attempt whose value it returns
		// was cancelled with the others.
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		actx, err := retry.HedgeValue(ctx, func(ctx context.Context) (context.Context, error) {
			<-ctx.Done()
			return ctx, errFirst
		}, hedged(time.Hour), nil)
		require.ErrorIs(t, err, errFirst)
		require.ErrorIs(t, actx.Err(), context.Canceled)
	})
}

func TestHedgesStopWhenTheDependencyIsSlowAsAWhole(t *testing.T) {
	// Every attempt takes 100ms, far past the 10ms hedge delay: each slow
	// attempt counts as failed, its success puts nothing back, so the guard
	// closes after a few calls and no hedge doubles the load after that.
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.4)
		var ev events
		p := hedged(10 * time.Millisecond).WithGuard(g)
		hedges := make([]int, 0, 200)
		for range 200 {
			ev = events{}
			a := &attemptPlan{steps: []step{{after: 100 * time.Millisecond}}}
			require.NoError(t, retry.Hedge(context.Background(), a.op, p, retry.WithHooks(ev.hooks())))
			hedges = append(hedges, ev.dones[0].Hedges)
		}
		total := 0
		for _, h := range hedges {
			total += h
		}
		require.LessOrEqual(t, total, 5, "hedges before the guard closed")
		for i, h := range hedges[100:] {
			require.Zero(t, h, "call %d hedged while the dependency is slow as a whole", 100+i)
		}
	})
}

func TestHedgedTimeLimitCountsFromTheStart(t *testing.T) {
	// Attempt 1 fails at 15ms; its hedge, started at 10ms, takes 10s. The
	// 100ms limit counts from the start: no round follows, and Elapsed says
	// 10.01s.
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(10 * time.Millisecond).WithMaxElapsed(100 * time.Millisecond).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		a := &attemptPlan{steps: []step{{after: 15 * time.Millisecond, err: errFlaky}, {after: 10 * time.Second, err: errFlaky}, {after: 5 * time.Millisecond, err: errFlaky}}}
		err := retry.Hedge(context.Background(), a.op, p)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.Equal(t, 2, a.starts(), "no round after the first")
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 10*time.Second+10*time.Millisecond, re.Elapsed)
	})
}

func TestHedgedHintIsKeptWhicheverAttemptFailsLast(t *testing.T) {
	// Attempt 1 fails at 30ms; its hedge, started at 10ms, fails at 12ms
	// with a server's hint of 1s: the next round waits the hint, not the
	// 100ms schedule.
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(3).
			WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, MaxInFlight: 3})
		a := &attemptPlan{steps: []step{{after: 30 * time.Millisecond, err: errFlaky}, {after: 2 * time.Millisecond, err: retry.After(time.Second, errFlaky)}, {after: time.Millisecond}}}
		var ev events
		start := time.Now()
		require.NoError(t, retry.Hedge(context.Background(), a.op, p, retry.WithHooks(ev.hooks())))
		require.Equal(t, 3, a.starts())
		require.Len(t, ev.retries, 1)
		require.True(t, ev.retries[0].Hinted)
		require.Equal(t, time.Second, ev.retries[0].Delay)
		require.Equal(t, 30*time.Millisecond+time.Second+time.Millisecond, time.Since(start))
	})
}

// HedgeValue leaves the winner's context alone, and that context holds
// nothing of the caller's once the call has returned: calls made on one
// long-lived context give their memory back without it ending.
func TestHedgeValueOnALongLivedContextHoldsNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("memory in bytes is only meaningful without -race")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := policy.Constant(time.Millisecond).WithHedging(policy.Hedging{Delay: time.Hour})
	call := func() {
		v, err := retry.HedgeValue(ctx, func(ctx context.Context) (context.Context, error) { return ctx, nil }, p, nil)
		require.NoError(t, err)
		require.NoError(t, v.Err(), "the winner's context is live after the call")
	}
	for range 1000 {
		call()
	}
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	const calls = 20_000
	for range calls {
		call()
	}
	grown := heap() - before
	t.Logf("%d hedged calls on one context: heap %+d B", calls, grown)
	require.Less(t, grown, int64(calls*20))
}

// An attempt of a hedged call that the caller's deadline cuts off sees the
// deadline, as the caller does, and not the cancellation the call gives the
// attempts it ends: the call's error does not match context.Canceled.
func TestHedgeAttemptCutOffByTheDeadlineSeesIt(t *testing.T) {
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err := retry.Hedge(ctx, func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			}, policy.Constant(time.Millisecond).WithHedging(policy.Hedging{Delay: 300 * time.Millisecond}))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NotErrorIs(t, err, context.Canceled)
		})
	}
}

// A hedged attempt's context ends at the caller's deadline on the policy's
// clock, where the caller's deadline is: under a mock clock that starts in
// 1970 it is not over before it starts.
func TestHedgeAttemptDeadlineOnThePolicysClock(t *testing.T) {
	clk := retrytest.NewClock()
	ctx, cancel := clk.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	err := retry.Hedge(ctx, func(ctx context.Context) error {
		if dl, _ := ctx.Deadline(); !dl.Equal(want) {
			return retry.Permanent(fmt.Errorf("attempt deadline %v, want %v", dl, want))
		}
		return ctx.Err()
	}, policy.Constant(0).WithMaxAttempts(3).WithClock(clk).WithHedging(policy.Hedging{Delay: 50 * time.Millisecond})) // no wait: a broken deadline fails at once
	require.NoError(t, err)
}
