//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// drain spends every token of g with retries that fail.
func drain(g *policy.Guard) {
	for protocol(g).Tokens() >= 1 {
		protocol(g).Allow(time.Now())
		protocol(g).Record(true, admit.Failed)
	}
}

// busy tells g of another call in flight until the test ends: a call alone
// in flight keeps its retries whatever the tokens.
func busy(t *testing.T, g *policy.Guard) {
	protocol(g).Start()
	t.Cleanup(protocol(g).Done)
}

func TestGuardLearnsEveryAttempt(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	p := policy.Constant(0).WithGuard(g)
	require.NoError(t, retry.Do(context.Background(), fails(3, errFlaky).op, p))
	require.Equal(t, 10-0.25-2+0.5, protocol(g).Tokens(), "a first try that failed (half the ratio), two retries that failed, one that succeeded")
	require.NoError(t, retry.Do(context.Background(), fails(0, nil).op, p), "a first-try success")
	require.Equal(t, 8.75, protocol(g).Tokens())
	_, err := retry.DoValue(context.Background(), func(context.Context) (int, error) { return 0, errFlaky }, p.WithMaxAttempts(2))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 7.5, protocol(g).Tokens(), "the last retry's failure takes its token")
}

// A denied retry is waited out, not the end of the call: the call asks
// again after the wait, and ends with ErrThrottled only when it runs out of
// attempts while denied.
func TestGuardDeniedRetryWaitsAndAsksAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(2, 0.5)
		drain(g)
		protocol(g).Allow(time.Now()) // the probe of this second, spent
		busy(t, g)
		var denials []time.Duration
		hooks := retry.WithHooks(&retry.Hooks{OnDenied: func(_ context.Context, e retry.RetryEvent) {
			denials = append(denials, e.Delay)
		}})
		op := fails(1, errFlaky)
		start := time.Now()
		err := retry.Do(context.Background(), op.op, policy.Constant(400*time.Millisecond).WithMaxAttempts(5).WithGuard(g), hooks)
		require.NoError(t, err, "the probe a second later went through")
		require.EqualValues(t, 2, op.calls.Load())
		require.Equal(t, []time.Duration{400 * time.Millisecond, 400 * time.Millisecond}, denials)
		require.Equal(t, 1200*time.Millisecond, time.Since(start), "denied at 0.4s and 0.8s, admitted at 1.2s")

		drain(g)
		protocol(g).Allow(time.Now())
		op = fails(5, errFlaky)
		err = retry.Do(context.Background(), op.op, policy.Constant(100*time.Millisecond).WithMaxAttempts(3).WithGuard(g))
		require.ErrorIs(t, err, retry.ErrThrottled)
		require.ErrorIs(t, err, errFlaky, "the last error is kept")
		require.EqualValues(t, 1, op.calls.Load())
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 1, re.Attempts)
		require.Contains(t, err.Error(), "retries throttled after 1 attempt")
	})
}

func TestGuardCountsOnlyNewsAboutTheDependency(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	drain(g)
	errOther := errors.New("not found")
	p := policy.Constant(0).WithGuard(g).WithRetryIf(func(err error) bool { return errors.Is(err, errFlaky) })
	require.Same(t, errOther, retry.Do(context.Background(), fails(1, errOther).op, p), "an error the policy does not retry")
	require.Zero(t, protocol(g).Tokens())
	err := retry.Do(context.Background(), fails(1, retry.Permanent(errFlaky)).op, p)
	require.ErrorIs(t, err, errFlaky)
	require.Zero(t, protocol(g).Tokens(), "a permanent error")

	ctx, cancel := context.WithCancel(context.Background())
	err = retry.Do(ctx, func(context.Context) error { cancel(); return context.Canceled }, p.WithRetryIf(nil))
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, protocol(g).Tokens(), "an attempt the caller's context cut short")
}

func TestGuardAttemptTimeoutsAreOverload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(4, 1)
		p := policy.Constant(time.Second).WithAttemptTimeout(time.Second).WithGuard(g).WithMaxAttempts(2)
		err := retry.Do(context.Background(), func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, p)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.Equal(t, 1.0, protocol(g).Tokens(), "two timed-out attempts take one each, and the retry its own")
	})
}

func TestGuardHintIsOverload(t *testing.T) {
	g := policy.NewGuard(4, 1)
	err := retry.Do(context.Background(), fails(1, retry.After(0, errFlaky)).op, policy.Constant(0).WithGuard(g))
	require.NoError(t, err)
	require.Equal(t, 4.0, protocol(g).Tokens(), "the first try's pause costs one, the retry's success gives back its own and one more")
	err = retry.Do(context.Background(), fails(2, retry.After(0, errFlaky)).op, policy.Constant(0).WithGuard(g).WithMaxAttempts(2))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 1.0, protocol(g).Tokens(), "two pauses asked for, one retry made")
}

// A Loop is never ended by the guard: it waits, whatever the guard says,
// and the pause after a run that succeeded is no retry at all.
func TestGuardNeverEndsALoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.5)
		busy(t, g)
		runs := 0
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := retry.Loop(ctx, func(context.Context) error {
			runs++
			return errFlaky // down for good
		}, policy.Constant(100*time.Millisecond).WithGuard(g))
		require.ErrorIs(t, err, context.DeadlineExceeded, "only the context ends it")
		require.ErrorIs(t, err, errFlaky)
		require.LessOrEqual(t, runs, 1+10+61, "the first run, the capacity, then a probe a second")
		require.GreaterOrEqual(t, runs, 60)
	})
}

// Program 3 of the admission goals: a Loop with a guard rides out a
// broker down for 8 runs, then stays connected until its context ends.
func TestGuardLoopRidesOutAShortOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.5)
		in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{
			{Fault: retrytest.Fault{Err: errFlaky}, Times: 8}, {Fault: retrytest.Fault{Stall: true}}, // connected until the context ends
		}})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = retry.Loop(ctx, retrytest.Wrap(in, succeed), policy.Exponential(time.Millisecond).WithCap(5*time.Millisecond).WithGuard(g))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, retry.ErrThrottled)
		require.Equal(t, 9, in.Counts().Calls)
	})
}

// Program 1 of the admission goals, in the core: one caller, one call at a
// time, a dependency that fails its first 6 attempts.
func TestGuardKeepsALoneCallersLimits(t *testing.T) {
	for name, p := range map[string]policy.Policy{
		"attempts": policy.Constant(20 * time.Millisecond).WithMaxAttempts(10),
		"time":     policy.Constant(20 * time.Millisecond).WithMaxElapsed(30 * time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := fails(6, errFlaky)
				require.NoError(t, retry.Do(context.Background(), op.op, p.WithGuard(policy.NewGuard(10, 0.5))))
				require.EqualValues(t, 7, op.calls.Load())
			})
		})
	}
}

func TestGuardOnAPolicyThatIsNotValid(t *testing.T) {
	p := policy.Constant(0).WithGuard(policy.NewGuard(0, 1))
	err := retry.Do(context.Background(), fails(0, nil).op, p)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorIs(t, err, policy.ErrInvalid)
}

// However many calls fail together, a full guard lets its capacity of them
// retry, and a probe a second.
func TestGuardFloorUnderConcurrentFailures(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	busy(t, g)
	p := policy.Constant(0).WithMaxAttempts(4).WithGuard(g)
	const calls = 1000
	var attempts, throttled atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for range calls {
		wg.Go(func() {
			err := retry.Do(context.Background(), func(context.Context) error {
				attempts.Add(1)
				return errFlaky
			}, p)
			if errors.Is(err, retry.ErrThrottled) {
				throttled.Add(1)
			}
		})
	}
	wg.Wait()
	probes := 1 + int32(time.Since(start)/time.Second)
	require.LessOrEqual(t, attempts.Load()-calls, 10+probes, "retries")
	require.GreaterOrEqual(t, throttled.Load(), calls-10-probes)
	require.Zero(t, protocol(g).Tokens())
}

// A Loop's time limit ends it with ErrExhausted, as its doc says, also
// when the guard was holding its runs back: the limit is the Loop's own.
func TestGuardLoopTimeLimitIsExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.5)
		drain(g)
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
		defer cancel()
		err := retry.Loop(ctx, func(context.Context) error { return errFlaky },
			policy.Constant(20*time.Millisecond).WithMaxElapsed(time.Second).WithGuard(g))
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.NotErrorIs(t, err, retry.ErrThrottled)
	})
}

// guardAt returns a guard of capacity 10 and ratio 0.5 with tokens left,
// spent by retries that failed (a whole token each) and first tries that
// failed (a quarter each).
func guardAt(tokens float64) *policy.Guard {
	g := policy.NewGuard(10, 0.5)
	for protocol(g).Tokens()-tokens >= 1 {
		protocol(g).Record(true, admit.Failed)
	}
	for protocol(g).Tokens()-tokens >= 0.25 {
		protocol(g).Record(false, admit.Failed)
	}
	return g
}

// TestGuardOutcomeTable runs each row of the table in the Guard's doc
// through package retry, on a guard of capacity 10 and ratio r = 0.5, and
// checks what the call added to the guard or took from it.
func TestGuardOutcomeTable(t *testing.T) {
	const r = 0.5
	errOther := errors.New("not found")
	onlyFlaky := func(err error) bool { return !errors.Is(err, errOther) }
	zero := policy.Constant(0)
	timesOut := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	hedged := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond, MaxInFlight: 2})
	for _, tt := range []struct {
		name  string
		from  float64 // tokens before the call
		call  func(g *policy.Guard) error
		delta float64
	}{
		{"first-try success", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(0, nil).op, zero.WithGuard(g))
		}, +r},
		{"first-try success, capped at the capacity", 9.75, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(0, nil).op, zero.WithGuard(g))
		}, +0.25},
		{"first try fails fast", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, errFlaky).op, zero.WithMaxAttempts(1).WithGuard(g))
		}, -r / 2},
		{"first try fails fast, then a retry succeeds", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, errFlaky).op, zero.WithGuard(g))
		}, -r/2 + r},
		{"first try and a retry fail fast", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(2, errFlaky).op, zero.WithMaxAttempts(2).WithGuard(g))
		}, -r/2 - 1},
		{"first try cut off by its attempt timeout", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), timesOut, zero.WithAttemptTimeout(time.Second).WithMaxAttempts(1).WithGuard(g))
		}, -1},
		{"first try and a retry cut off by their attempt timeout", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), timesOut, zero.WithAttemptTimeout(time.Second).WithMaxAttempts(2).WithGuard(g))
		}, -1 - 2},
		{"first try asks for a pause (After)", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, retry.After(0, errFlaky)).op, zero.WithMaxAttempts(1).WithGuard(g))
		}, -1},
		{"first try and a retry ask for a pause", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(2, retry.After(0, errFlaky)).op, zero.WithMaxAttempts(2).WithGuard(g))
		}, -1 - 2},
		{"first try returns a bare context.DeadlineExceeded", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, context.DeadlineExceeded).op, zero.WithMaxAttempts(1).WithGuard(g))
		}, -1},
		{"a Permanent error", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, retry.Permanent(errFlaky)).op, zero.WithGuard(g))
		}, 0},
		{"a retry's Permanent error", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), (&script{errs: []error{errFlaky, retry.Permanent(errFlaky)}}).op, zero.WithGuard(g))
		}, -r / 2},
		{"an error RetryIf rejects", 5, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, errOther).op, zero.WithRetryIf(onlyFlaky).WithGuard(g))
		}, 0},
		{"a first try the caller's context cut short", 5, func(g *policy.Guard) error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			return retry.Do(ctx, func(context.Context) error { cancel(); return context.Canceled }, zero.WithGuard(g))
		}, 0},
		{"a retry denied, then the call gives up", 0, func(g *policy.Guard) error {
			protocol(g).Allow(time.Now()) // this second's probe, spent
			protocol(g).Start()           // another call in flight
			defer protocol(g).Done()
			return retry.Do(context.Background(), fails(1, errFlaky).op, policy.Constant(100*time.Millisecond).WithMaxAttempts(2).WithGuard(g))
		}, 0},
		{"a probe that succeeds", 0, func(g *policy.Guard) error {
			return retry.Do(context.Background(), fails(1, errFlaky).op, zero.WithGuard(g))
		}, +r},
		{"a Loop's run after a success fails: a first try", 5, func(g *policy.Guard) error {
			return retry.Loop(context.Background(), (&script{errs: []error{nil, errFlaky, retry.Permanent(errOther)}}).op, zero.WithGuard(g))
		}, +r - r/2},
		{"a first try that succeeds only after the hedge delay", 8.75, func(g *policy.Guard) error {
			p := &attemptPlan{steps: []step{{after: 50 * time.Millisecond}}}
			return retry.Hedge(context.Background(), p.op, hedged.WithGuard(g))
		}, +0.25}, // up to nine tenths: no hedge could start
		{"a hedge that loses, cancelled", 10, func(g *policy.Guard) error {
			p := &attemptPlan{steps: []step{{after: 50 * time.Millisecond}, {after: time.Hour}}}
			return retry.Hedge(context.Background(), p.op, hedged.WithGuard(g))
		}, -1}, // the first try's slow success adds nothing above nine tenths
		{"a hedge that wins", 10, func(g *policy.Guard) error {
			p := &attemptPlan{steps: []step{{after: time.Hour}, {after: 5 * time.Millisecond}}}
			return retry.Hedge(context.Background(), p.op, hedged.WithGuard(g))
		}, -1 + r},
		{"a hedge that fails fast while the first try goes on to succeed", 10, func(g *policy.Guard) error {
			p := &attemptPlan{steps: []step{{after: 50 * time.Millisecond}, {after: 0, err: errFlaky}}}
			return retry.Hedge(context.Background(), p.op, hedged.WithGuard(g))
		}, -1 - 1 + r},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := guardAt(tt.from)
				require.InDelta(t, tt.from, protocol(g).Tokens(), 1e-9)
				tt.call(g)
				synctest.Wait() // hedges that lost have returned
				require.InDelta(t, tt.delta, protocol(g).Tokens()-tt.from, 1e-9, "tokens after the call: %v", protocol(g).Tokens())
			})
		})
	}
}

// A call alone in flight keeps its retries whatever the tokens, in Do and
// in Loop: one call at a time cannot make a storm. With another call in
// flight, the tokens decide again.
func TestGuardLetsACallAloneInFlightRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(10, 0.5)
		drain(g)
		protocol(g).Allow(time.Now()) // this second's probe, spent
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(4).WithGuard(g)
		op := fails(3, errFlaky)
		require.NoError(t, retry.Do(context.Background(), op.op, p), "alone: every retry admitted")
		require.EqualValues(t, 4, op.calls.Load())

		runs := 0
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := retry.Loop(ctx, func(context.Context) error { runs++; return errFlaky }, p.WithMaxAttempts(0))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 100, runs, "a Loop alone runs after every pause")

		drain(g)
		protocol(g).Allow(time.Now())
		var inFlight sync.WaitGroup
		release := make(chan struct{})
		started := make(chan struct{})
		inFlight.Go(func() { // another call, in its first attempt meanwhile
			_ = retry.Do(context.Background(), func(context.Context) error { close(started); <-release; return nil }, p)
		})
		<-started
		op = fails(3, errFlaky)
		err = retry.Do(context.Background(), op.op, p)
		require.ErrorIs(t, err, retry.ErrThrottled, "not alone: the tokens decide")
		require.EqualValues(t, 1, op.calls.Load())
		close(release)
		inFlight.Wait()

		protocol(g).Allow(time.Now())
		waiting := make(chan struct{})
		inFlight.Go(func() { // another call, waiting to retry meanwhile
			_ = retry.Do(context.Background(), fails(1, errFlaky).op, policy.Constant(time.Hour).WithMaxAttempts(2).WithGuard(g),
				retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { close(waiting) }}))
		})
		<-waiting
		op = fails(3, errFlaky)
		err = retry.Do(context.Background(), op.op, p)
		require.ErrorIs(t, err, retry.ErrThrottled, "not alone: another call waits")
		require.EqualValues(t, 1, op.calls.Load())
		time.Sleep(time.Hour) // the other call's wait ends
		inFlight.Wait()
	})
}

// TestGuardLoneCallerKeepsItsSuccesses is a caller with one call in flight
// at a time, against a dependency that fails 70 % of its attempts, 4
// attempts a call: with the default guard it keeps within 1 pp of no guard
// (it used to keep 37 % of its calls where no guard kept 76 %).
func TestGuardLoneCallerKeepsItsSuccesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const calls = 3000
		success := func(g *policy.Guard) float64 {
			src := rand.New(rand.NewPCG(7, 70))
			p := policy.Exponential(10 * time.Millisecond).WithMaxAttempts(4).WithGuard(g)
			ok := 0
			for range calls {
				if retry.Do(context.Background(), func(context.Context) error {
					if src.Float64() < 0.7 {
						return errFlaky
					}
					return nil
				}, p) == nil {
					ok++
				}
			}
			return float64(ok) / calls
		}
		guarded, unguarded := success(policy.NewGuard(50, 1)), success(nil)
		t.Logf("NewGuard(50, 1): %.1f%% of the calls succeed; no guard: %.1f%%", 100*guarded, 100*unguarded)
		require.InDelta(t, unguarded, guarded, 0.01)
	})
}

// stalled makes g hold new calls back: 16 attempts in a row that timed
// out, and 16 attempts running until the test ends. The probe of the
// second is spent, so that a call held back waits.
func stalled(t *testing.T, g *policy.Guard) {
	for range 16 {
		protocol(g).Record(false, admit.Overloaded)
		protocol(g).Run()
		t.Cleanup(protocol(g).Leave)
	}
	spendProbe(t, g)
}

// sixteenRunning reports whether g, stalled, counts exactly 16 attempts
// running: with one fewer it lets calls through, with these it does not.
func sixteenRunning(g *policy.Guard) bool {
	protocol(g).Leave()
	free := !protocol(g).Held()
	protocol(g).Run()
	return free && protocol(g).Held()
}

// spendProbe spends the guard's probe of this second; the last probe must
// be a second old or more.
func spendProbe(t *testing.T, g *policy.Guard) {
	turn := protocol(g).Enter()
	require.NotNil(t, turn)
	require.True(t, protocol(g).Probe(turn, time.Now()))
	protocol(g).Leave()
}

// While the guard holds new calls back, a call waits for its turn without
// running the operation, as it waits for a denied retry: its back-off
// delays, each using up an attempt, within its attempt limit, its time
// limit and ctx's deadline. Then it ends with an error matching ErrShed, in
// Do's first-try path, under hooks (which hear of it), in DoValue and in
// Hedge.
func TestGuardHoldsNewCallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		stalled(t, g)
		ran := 0
		op := func(context.Context) error { ran++; return nil }
		var done []retry.DoneEvent
		hooks := retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) { done = append(done, e) }})
		p := policy.Constant(100 * time.Millisecond).WithMaxAttempts(3).WithGuard(g)
		hp := p.WithHedging(policy.Hedging{Delay: time.Second})
		for name, call := range map[string]func(ctx context.Context) error{
			"Do":         func(ctx context.Context) error { return retry.Do(ctx, op, p) },
			"Do, hooked": func(ctx context.Context) error { return retry.Do(ctx, op, p, hooks) },
			"DoValue": func(ctx context.Context) error {
				_, err := retry.DoValue(ctx, func(ctx context.Context) (int, error) { return 1, op(ctx) }, p)
				return err
			},
			"Hedge": func(ctx context.Context) error { return retry.Hedge(ctx, op, hp) },
		} {
			time.Sleep(time.Second) // the last probe a second old
			spendProbe(t, g)
			start := time.Now()
			err := call(context.Background())
			require.ErrorIs(t, err, retry.ErrShed, name)
			require.ErrorIs(t, err, retry.ErrExhausted, "%s: the attempt limit ended the wait", name)
			require.NotErrorIs(t, err, retry.ErrThrottled, name)
			require.Equal(t, 200*time.Millisecond, time.Since(start), "%s: the two waits of its two retries", name)
			var re *retry.Error
			require.ErrorAs(t, err, &re, name)
			require.Zero(t, re.Attempts, name)
			require.Nil(t, re.Last, name)
			require.EqualError(t, err, "retry: call shed before the first attempt (the guard held the first attempt back)", name)
		}
		require.Zero(t, ran, "the operation never ran")
		require.Len(t, done, 1)
		require.ErrorIs(t, done[0].Err, retry.ErrShed)
		require.Zero(t, done[0].Attempts)
		require.True(t, sixteenRunning(g), "the calls that gave up take no room")

		unlimited := policy.Constant(100 * time.Millisecond).WithGuard(g)
		for _, tt := range []struct {
			name     string
			p        policy.Policy
			deadline time.Duration // 0: none
			want     time.Duration
			deadErr  bool
		}{
			{"the deadline", unlimited, 250 * time.Millisecond, 200 * time.Millisecond, true},
			{"the time limit", unlimited.WithMaxElapsed(500 * time.Millisecond), 0, 500 * time.Millisecond, false},
		} {
			time.Sleep(time.Second)
			spendProbe(t, g)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.deadline > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
			}
			start := time.Now()
			err := retry.Do(ctx, op, tt.p)
			cancel()
			require.ErrorIs(t, err, retry.ErrShed, tt.name)
			require.Equal(t, tt.deadErr, errors.Is(err, context.DeadlineExceeded), tt.name)
			require.Equal(t, tt.want, time.Since(start), tt.name)
			require.Zero(t, ran, tt.name)
		}
	})
}

// A held call of one attempt waits for its turn too: once, the schedule's
// first delay, before it is shed. A call of two attempts waits as long. The
// turn that comes during that wait lets the call run.
func TestGuardHeldCallWaitsAtLeastOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		stalled(t, g)
		ran := 0
		op := func(context.Context) error { ran++; return nil }
		p := policy.Exponential(100 * time.Millisecond).WithGuard(g)
		for _, n := range []int{1, 2} {
			time.Sleep(time.Second) // the last probe a second old
			spendProbe(t, g)
			start := time.Now()
			err := retry.Do(context.Background(), op, p.WithMaxAttempts(n))
			require.ErrorIs(t, err, retry.ErrShed, "attempts %d", n)
			require.ErrorIs(t, err, retry.ErrExhausted, "attempts %d", n)
			require.Equal(t, 100*time.Millisecond, time.Since(start), "attempts %d: one wait, the first delay", n)
		}
		require.Zero(t, ran)

		time.Sleep(time.Second)
		spendProbe(t, g)
		errc := make(chan error, 1)
		go func() { errc <- retry.Do(context.Background(), op, p.WithMaxAttempts(1)) }()
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		protocol(g).Record(false, admit.Succeeded) // the dependency answers: the call's turn
		require.NoError(t, <-errc)
		require.Equal(t, 1, ran)
	})
}

// A call held back runs as soon as its turn comes: when a running attempt
// ends, when the dependency answers, or as the guard's probe a second
// later. A Loop's first run waits its turn as any call does.
func TestGuardHeldCallRunsInItsTurn(t *testing.T) {
	for _, tt := range []struct {
		name string
		turn func(g *policy.Guard) // what gives the call its turn; nil: the probe
		want time.Duration         // when the call runs
	}{
		{"an attempt ends", func(g *policy.Guard) { protocol(g).Leave(); protocol(g).Run() }, 200 * time.Millisecond},
		{"an answer", func(g *policy.Guard) { protocol(g).Record(false, admit.Succeeded) }, 200 * time.Millisecond},
		{"the probe", nil, time.Second},
	} {
		for _, loop := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, Loop %v", tt.name, loop), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					g := policy.NewGuard(50, 1)
					stalled(t, g)
					start := time.Now()
					var ranAt atomic.Int64 // a time.Duration
					op := func(context.Context) error {
						ranAt.Store(int64(time.Since(start)))
						return retry.Permanent(errFlaky)
					}
					errc := make(chan error, 1)
					p := policy.Constant(time.Second).WithGuard(g)
					go func() {
						if loop {
							errc <- retry.Loop(context.Background(), op, p)
						} else {
							errc <- retry.Do(context.Background(), op, p)
						}
					}()
					time.Sleep(200 * time.Millisecond)
					synctest.Wait()
					require.Zero(t, ranAt.Load(), "held back")
					if tt.turn != nil {
						tt.turn(g)
					}
					require.ErrorIs(t, <-errc, errFlaky)
					require.Equal(t, tt.want, time.Duration(ranAt.Load()))
					if tt.turn == nil {
						require.True(t, sixteenRunning(g), "the call's attempt has ended")
					}
				})
			})
		}
	}
}

// A first-try success reads no clock while the guard lets calls through,
// with few calls in flight or many.
func TestGuardFirstTryReadsNoClock(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are only meaningful without -race")
	}
	clk := &countingClock{vclock: newVClock()}
	g := policy.NewGuard(50, 1)
	p := policy.Default().WithClock(clk).WithGuard(g)
	for _, inFlight := range []int{0, 20} {
		for range inFlight {
			protocol(g).Start()
			defer protocol(g).Done()
			protocol(g).Run()
			defer protocol(g).Leave()
		}
		protocol(g).Record(false, admit.Overloaded) // a stall begun, not yet one
		require.Zero(t, testing.AllocsPerRun(100, func() { _ = retry.Do(context.Background(), succeed, p) }), "%d in flight", inFlight)
		require.Zero(t, clk.reads.Load(), "%d in flight", inFlight)
	}
}

// A call whose operation panics is no longer in flight once the panic has
// left Do: a call alone afterwards keeps its retries.
func TestGuardCallThatPanicsLeavesTheFlight(t *testing.T) {
	g := policy.NewGuard(10, 0.5)
	drain(g)
	protocol(g).Allow(time.Now()) // this second's probe, spent
	p := policy.Constant(0).WithMaxAttempts(3).WithGuard(g)
	for _, first := range []bool{true, false} { // Do's first try, and a retry
		func() {
			defer func() { require.Equal(t, "boom", recover()) }()
			n := 0
			_ = retry.Do(context.Background(), func(context.Context) error {
				if n++; first || n > 1 {
					panic("boom")
				}
				return errFlaky
			}, p)
		}()
	}
	op := fails(2, errFlaky)
	require.NoError(t, retry.Do(context.Background(), op.op, p), "alone in flight")
	require.EqualValues(t, 3, op.calls.Load())
}

// runningOf returns how many attempts g counts as running, up to 16. It
// leaves g stalled.
func runningOf(g *policy.Guard) int {
	for range 16 {
		protocol(g).Record(false, admit.Overloaded)
	}
	k := 0
	for !protocol(g).Held() {
		protocol(g).Run()
		k++
	}
	for range k {
		protocol(g).Leave()
	}
	return 16 - k
}

// noCallInFlight reports whether g counts no call in flight: a call that
// starts then is alone, and has its retry admitted with no token left. It
// leaves g without tokens.
func noCallInFlight(g *policy.Guard) bool {
	drain(g)
	protocol(g).Allow(time.Now()) // this second's probe, spent
	protocol(g).Start()
	defer protocol(g).Done()
	return protocol(g).Allow(time.Now())
}

// Every path that counts an attempt as running stops counting it when the
// attempt ends: a success, a retried failure, a panic, a cancel, a hedged
// round and its losers, a Loop's runs.
func TestGuardCountsEveryAttemptOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for name, call := range map[string]func(g *policy.Guard){
			"Do, first try": func(g *policy.Guard) { _ = retry.Do(context.Background(), succeed, policy.Constant(0).WithGuard(g)) },
			"Do, retried": func(g *policy.Guard) {
				_ = retry.Do(context.Background(), fails(2, errFlaky).op, policy.Constant(0).WithGuard(g))
			},
			"Do, panic": func(g *policy.Guard) {
				defer func() { _ = recover() }()
				_ = retry.Do(context.Background(), func(context.Context) error { panic("boom") }, policy.Constant(0).WithGuard(g))
			},
			"DoValue, panic on a retry": func(g *policy.Guard) {
				defer func() { _ = recover() }()
				n := 0
				_, _ = retry.DoValue(context.Background(), func(context.Context) (int, error) {
					if n++; n > 1 {
						panic("boom")
					}
					return 0, errFlaky
				}, policy.Constant(0).WithAttemptTimeout(time.Second).WithGuard(g))
			},
			"Do, cancelled in an attempt": func(g *policy.Guard) {
				ctx, cancel := context.WithCancel(context.Background())
				_ = retry.Do(ctx, func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() }, policy.Constant(0).WithGuard(g))
			},
			"Hedge": func(g *policy.Guard) {
				_ = retry.Hedge(context.Background(), func(ctx context.Context) error {
					select {
					case <-ctx.Done():
					case <-time.After(3 * time.Second):
					}
					return nil
				}, policy.Constant(0).WithGuard(g).WithHedging(policy.Hedging{Delay: time.Second}))
				time.Sleep(5 * time.Second) // the losers end too
			},
			"Loop": func(g *policy.Guard) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_ = retry.Loop(ctx, fails(3, errFlaky).op, policy.Constant(10*time.Millisecond).WithGuard(g))
			},
		} {
			g := policy.NewGuard(50, 1)
			call(g)
			require.Zero(t, runningOf(g), name)
			require.True(t, noCallInFlight(g), name)
		}
	})
}

// Loops that share a guard take no room between their runs: a stall they
// saw does not hold a new call back, and the call's success ends it.
func TestGuardLoopsBetweenRunsHoldNothingBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				_ = retry.Loop(ctx, func(ctx context.Context) error {
					time.Sleep(50 * time.Millisecond)
					return nil
				}, policy.Constant(time.Minute).WithGuard(g))
			})
		}
		time.Sleep(time.Second) // every Loop waits for its next run
		for range 16 {
			protocol(g).Record(false, admit.Overloaded)
		}
		require.True(t, protocol(g).Stalled())
		start := time.Now()
		require.NoError(t, retry.Do(context.Background(), succeed, policy.Constant(time.Second).WithMaxAttempts(2).WithGuard(g)))
		require.Zero(t, time.Since(start), "at once")
		require.False(t, protocol(g).Stalled(), "its success ended the stall")
		cancel()
		wg.Wait()
	})
}

// protocol returns g with the protocol that package retry drives.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }

// A held call whose deadline or time limit comes before its first back-off
// delay ends waits for its turn until that limit, rather than failing at
// once: a turn that comes before the limit runs the call.
func TestGuardHeldCallWaitsUpToItsLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		p    policy.Policy
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 40*time.Millisecond)
		}, policy.Constant(100 * time.Millisecond)},
		{"time limit", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			policy.Constant(100 * time.Millisecond).WithMaxElapsed(40 * time.Millisecond)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := policy.NewGuard(50, 1)
				stalled(t, g)
				time.Sleep(time.Second)
				spendProbe(t, g)
				p := tt.p.WithMaxAttempts(1).WithGuard(g)
				ran := 0
				op := func(context.Context) error { ran++; return nil }

				ctx, cancel := tt.ctx()
				start := time.Now()
				err := retry.Do(ctx, op, p)
				cancel()
				require.ErrorIs(t, err, retry.ErrShed)
				require.Equal(t, 40*time.Millisecond, time.Since(start), "it waited up to its limit")
				var e *retry.Error
				require.ErrorAs(t, err, &e)
				require.Equal(t, 40*time.Millisecond, e.Elapsed, "the wait it made, not the time before it")
				require.Zero(t, ran)

				time.Sleep(time.Second)
				spendProbe(t, g)
				ctx, cancel = tt.ctx()
				defer cancel()
				errc := make(chan error, 1)
				go func() { errc <- retry.Do(ctx, op, p) }()
				time.Sleep(20 * time.Millisecond)
				synctest.Wait()
				protocol(g).Record(false, admit.Succeeded) // its turn, before the limit
				require.NoError(t, <-errc)
				require.Equal(t, 1, ran)
			})
		})
	}
}

// A held call reports the waits it made: a turn that comes 200ms into a
// back-off of 1s makes the call's waits 200ms, to its hooks too.
func TestGuardHeldCallReportsTheWaitItMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		stalled(t, g)
		var wait time.Duration
		var done retry.DoneEvent
		h := &retry.Hooks{
			OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context { wait = e.Wait; return ctx },
			OnDone:    func(_ context.Context, e retry.DoneEvent) { done = e },
		}
		errc := make(chan error, 1)
		go func() {
			errc <- retry.Do(context.Background(), func(context.Context) error { return nil },
				policy.Constant(time.Second).WithGuard(g), retry.WithHooks(h))
		}()
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		protocol(g).Record(false, admit.Succeeded) // the dependency answers: the call's turn
		require.NoError(t, <-errc)
		require.Equal(t, 200*time.Millisecond, wait, "AttemptEvent.Wait")
		require.Equal(t, 200*time.Millisecond, done.Waited, "DoneEvent.Waited")
	})
}

// A held call asks to go as the guard's probe a second apart, whatever its
// back-off: with a back-off of 5s it goes as the probe of the next second.
func TestGuardHeldCallAsksForTheProbeEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := policy.NewGuard(50, 1)
		stalled(t, g)
		start := time.Now()
		var ranAt time.Duration
		err := retry.Do(context.Background(), func(context.Context) error {
			ranAt = time.Since(start)
			return nil
		}, policy.Constant(5*time.Second).WithGuard(g))
		require.NoError(t, err)
		require.Equal(t, time.Second, ranAt)
	})
}
