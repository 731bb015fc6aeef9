//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

var errCrash = errors.New("container exited with code 1")

func TestLoopKubeletCrashLoop(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Default().WithResetRule(policy.ResetRule{AfterStableRun: 10 * time.Minute}).WithClock(clk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var runs atomic.Int32
	stableRun := int32(9) // the run that stays up for 11 minutes before crashing
	running, crash := make(chan struct{}), make(chan struct{})
	var ev events
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, func(context.Context) error {
			if runs.Add(1) == stableRun {
				running <- struct{}{}
				<-crash
			}
			return errCrash
		}, p, retry.WithHooks(ev.hooks()))
	}()

	// Crash after crash the delay grows, then stays at the cap.
	for _, want := range []time.Duration{10, 20, 40, 80, 160, 300, 300, 300} {
		require.Equal(t, want*time.Second, clk.Step(t))
	}
	// Run 9 stays up for 11 minutes, then crashes: the back-off starts over.
	<-running
	clk.Add(11 * time.Minute)
	close(crash)
	require.Equal(t, 10*time.Second, clk.Step(t))
	require.Equal(t, 20*time.Second, clk.Step(t))
	require.Equal(t, 40*time.Second, clk.NextWait(t))
	ev.mu.Lock()
	for i, e := range ev.retries {
		require.Equal(t, i == 8, e.StartedOver, "retry %d: Reset", i+1)
	}
	ev.mu.Unlock()

	cancel() // mid-wait: Loop returns at once, the timer never fires
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, errCrash)
	require.Equal(t, int32(11), runs.Load())
}

func TestLoopResetsOnSuccessByDefault(t *testing.T) {
	clk := retrytest.NewClock()
	script := []error{errCrash, errCrash, errCrash, nil, errCrash, errCrash}
	var runs atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, func(context.Context) error {
			n := runs.Add(1)
			return script[min(int(n), len(script))-1]
		}, policy.Default().WithClock(clk))
	}()
	for _, want := range []time.Duration{10, 20, 40, 10, 20, 40} {
		require.Equal(t, want*time.Second, clk.Step(t))
	}
	clk.NextWait(t)
	cancel()
	require.ErrorIs(t, result(t, done), context.Canceled)
}

func TestLoopWaitsAfterSuccessTooSoItCannotSpin(t *testing.T) {
	clk := retrytest.NewClock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- retry.Loop(ctx, succeed, policy.Default().WithClock(clk)) }()
	require.Equal(t, 10*time.Second, clk.Step(t))
	require.Equal(t, 10*time.Second, clk.Step(t))
	clk.NextWait(t)
	cancel()
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.NoError(t, re.Last, "the last run succeeded")
}

func TestLoopEndsOnPermanent(t *testing.T) {
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{
		{Fault: retrytest.Fault{Err: errFlaky}, Times: 2}, {Fault: retrytest.Fault{Err: retry.Permanent(errCrash)}},
	}})
	require.NoError(t, err)
	err = retry.Loop(context.Background(), retrytest.Wrap(in, succeed), policy.Constant(0))
	require.Same(t, errCrash, err)
	require.Equal(t, 3, in.Counts().Calls)
}

func TestLoopAttemptLimitCountsFromTheLastReset(t *testing.T) {
	// Five failures in a row end the loop; a success in between starts the
	// count over.
	crash := retrytest.Fault{Err: errCrash}
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Fault: crash, Times: 4}, {Times: 1}, {Fault: crash}}})
	require.NoError(t, err)
	err = retry.Loop(context.Background(), retrytest.Wrap(in, succeed), policy.Constant(0).WithMaxAttempts(5))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errCrash)
	require.Equal(t, 10, in.Counts().Calls)
}

func TestLoopInvalid(t *testing.T) {
	require.ErrorIs(t, retry.Loop(context.Background(), nil, policy.Default()), policy.ErrInvalid)
	require.ErrorIs(t, retry.Loop(context.Background(), succeed, policy.Constant(-1)), policy.ErrInvalid)
}

// runs returns an operation that returns script[i] on its i-th run (the
// last one for ever), counting the runs, and takes took[i] of clk's time if
// given.
func runs(clk *vclock, script []error, took []time.Duration, n *int) func(context.Context) error {
	return func(context.Context) error {
		run := *n
		*n++
		if run < len(took) && clk != nil {
			clk.Advance(took[run])
		}
		return script[min(run, len(script)-1)]
	}
}

func TestLoopFirstRunSuccessStartsOver(t *testing.T) {
	// Run 1 succeeds, then every run fails: the limit of two attempts counts
	// from the success, so three runs in all.
	clk := newVClock()
	n := 0
	err := retry.Loop(context.Background(), runs(nil, []error{nil, errCrash}, nil, &n), policy.Constant(0).WithMaxAttempts(2).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errCrash)
	require.Equal(t, 3, n)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 2, re.Attempts, "the runs the limit counted")
	require.EqualError(t, err, "retry: gave up after 2 failed runs in a row (3 runs in all) in 20ms: container exited with code 1")
}

func TestLoopAlwaysSucceedingNeverExhausts(t *testing.T) {
	clk := retrytest.NewClock()
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, func(context.Context) error { n.Add(1); return nil }, policy.Constant(time.Second).WithMaxAttempts(1).WithClock(clk))
	}()
	for range 5 {
		require.Equal(t, time.Second, clk.Step(t))
	}
	clk.NextWait(t)
	cancel()
	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, int32(6), n.Load())
}

func TestLoopTimeLimitCountsFromTheFirstRunSuccess(t *testing.T) {
	// Run 1 succeeds after 20s; the 25s limit counts from then: the failure
	// at 30s is retried, the one at 40s would wait past 20s+25s.
	clk := newVClock()
	n := 0
	err := retry.Loop(context.Background(), runs(clk, []error{nil, errCrash}, []time.Duration{20 * time.Second}, &n),
		policy.Constant(10*time.Second).WithMaxElapsed(25*time.Second).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 3, n, "the success, then failures at 30s and 40s")
	require.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second}, clk.Waits())
}

func TestLoopStableFirstRunThenCrashStartsFresh(t *testing.T) {
	// The kubelet rule with a five-minute limit: a first run that stays up
	// for 11 minutes and then crashes gets a fresh 10s back-off.
	clk := newVClock()
	n := 0
	p := policy.Default().WithResetRule(policy.ResetRule{AfterStableRun: 10 * time.Minute}).WithMaxElapsed(5 * time.Minute).WithClock(clk)
	err := retry.Loop(context.Background(), runs(clk, []error{errCrash}, []time.Duration{11 * time.Minute}, &n), p)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second}, clk.Waits(),
		"10s, 20s, 40s, 80s fit in five minutes from the crash; 160s more would not")
}

func TestLoopStableRunThatFailedIsTheFirstOfTheNewCount(t *testing.T) {
	// Every run fails; the third lasts two minutes, past the stable-run
	// rule's minute. With three attempts, the count starts again at that
	// run, which is its first failure: two fast failures later, Loop gives
	// up, after five runs in all.
	clk := newVClock()
	n := 0
	p := policy.Constant(time.Second).WithMaxAttempts(3).WithResetRule(policy.ResetRule{AfterStableRun: time.Minute}).WithClock(clk)
	err := retry.Loop(context.Background(), runs(clk, []error{errCrash}, []time.Duration{0, 0, 2 * time.Minute}, &n), p)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 5, n)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 3, re.Attempts, "the long run that failed, then two more")
}

func TestLoopCannotSpin(t *testing.T) {
	// Constant(0) and an operation that returns at once: Loop still pauses
	// 10ms between runs. So 50ms hold five runs, at 0, 10, 20, 30 and 40ms:
	// the pause after the fifth would end at the deadline.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var at []time.Duration
		start := time.Now()
		err := retry.Loop(ctx, func(context.Context) error { at = append(at, time.Since(start)); return nil }, policy.Constant(0))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond}, at)
	})
	// A hint of zero does not spin it either.
	clk := newVClock()
	n := 0
	err := retry.Loop(context.Background(), runs(nil, []error{retry.After(0, errCrash)}, nil, &n), policy.Constant(0).WithMaxAttempts(4).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}, clk.Waits())
}

func TestLoopCancelledErrorCountsFailedRunsInARow(t *testing.T) {
	// Runs: success, failure, failure; cancelled during the next wait.
	clk := retrytest.NewClock()
	ctx, cancel := context.WithCancel(context.Background())
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Times: 1}, {Fault: retrytest.Fault{Err: errCrash}}}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(ctx, retrytest.Wrap(in, succeed), policy.Constant(time.Second).WithClock(clk))
	}()
	clk.Step(t)
	clk.Step(t)
	clk.NextWait(t)
	cancel()
	err = result(t, done)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 2, re.Attempts, "the failed runs in a row, as the attempt limit counts them")
	require.EqualError(t, err, "retry: context canceled after 2 failed runs in a row (3 runs in all) in 2s: container exited with code 1")
}

func TestLoopSuccessEndsTheFailuresWhateverTheResetRule(t *testing.T) {
	// The stable-run rule alone does not start over on success, but a
	// success still ends a run of failures: two failures in a row are
	// needed to give up.
	clk := newVClock()
	n := 0
	p := policy.Constant(0).WithMaxAttempts(2).WithResetRule(policy.ResetRule{AfterStableRun: time.Hour}).WithClock(clk)
	err := retry.Loop(context.Background(), runs(nil, []error{errCrash, nil, errCrash, nil, errCrash, errCrash}, nil, &n), p)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, 6, n)
}

func TestLoopFirstRunSuccessIsReportedAsAStartOver(t *testing.T) {
	clk := newVClock()
	var ev events
	n := 0
	err := retry.Loop(context.Background(), runs(nil, []error{nil, nil, errCrash}, nil, &n),
		policy.Constant(time.Second).WithMaxAttempts(1).WithClock(clk), retry.WithHooks(ev.hooks()))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Len(t, ev.retries, 2)
	require.True(t, ev.retries[0].StartedOver, "the first run's success starts over like any later one")
	require.True(t, ev.retries[1].StartedOver)
}

// TestLoopElapsedWhateverObservesIt: a Loop's Elapsed counts from the end of
// the run that last started the back-off over, whether or not hooks watch
// the call. Run 2 succeeds and starts over; run 3 fails after five minutes;
// run 4 fails and cancels: Elapsed is from the end of run 2 to the end of
// run 4.
func TestLoopElapsedWhateverObservesIt(t *testing.T) {
	for _, hooks := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var opts []retry.Option
			if hooks {
				opts = append(opts, retry.WithHooks(&retry.Hooks{}))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runs := 0
			err := retry.Loop(ctx, func(context.Context) error {
				switch runs++; runs {
				case 1:
					return errCrash
				case 2:
					return nil
				case 3:
					time.Sleep(5 * time.Minute)
					return errCrash
				}
				cancel()
				return errCrash
			}, policy.Constant(0), opts...)
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			// Pauses of 10ms after runs 2 and 3, and run 3's five minutes.
			require.Equal(t, 5*time.Minute+20*time.Millisecond, re.Elapsed, "hooks %v", hooks)
			require.Equal(t, 2, re.Attempts, "hooks %v: failed runs in a row", hooks)
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}

// TestLoopStoppedAfterASuccessThatStartedOver: a Loop whose context ends
// with a successful run reports the new sequence: no failed run in a row,
// no last error, and no time since the start-over.
func TestLoopStoppedAfterASuccessThatStartedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		runs := 0
		err := retry.Loop(ctx, func(context.Context) error {
			if runs++; runs == 1 {
				return errCrash
			}
			time.Sleep(time.Second)
			cancel()
			return nil
		}, policy.Constant(time.Second))
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 0, re.Attempts)
		require.NoError(t, re.Last)
		require.Zero(t, re.Elapsed)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestLoopHealthyRunsNeverHitTheTimeLimit: the time limit bounds a run of
// failures; the pauses after successful runs are not retries, whatever the
// reset rule, so a healthy Loop never gives up.
func TestLoopHealthyRunsNeverHitTheTimeLimit(t *testing.T) {
	for name, r := range map[string]policy.ResetRule{
		"none":    {},
		"stable":  {AfterStableRun: 10 * time.Minute},
		"idle":    {AfterIdle: time.Minute},
		"success": {OnSuccess: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				runs := 0
				p := policy.Exponential(time.Second).WithCap(time.Minute).WithMaxElapsed(time.Second).WithResetRule(r)
				err := retry.Loop(ctx, func(context.Context) error { runs++; return nil }, p)
				require.NotErrorIs(t, err, retry.ErrExhausted)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Greater(t, runs, 50)
			})
		})
	}
}

// TestLoopTimeLimitCountsTheCurrentRunOfFailures: whatever the reset rule,
// the time limit measures how long the failures since the last success have
// lasted, as the attempt limit counts them: a long healthy stretch does not
// use it up.
func TestLoopTimeLimitCountsTheCurrentRunOfFailures(t *testing.T) {
	for name, r := range map[string]policy.ResetRule{
		"none":   {},
		"stable": {AfterStableRun: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// fail, four healthy runs, then failures for ever.
				runs := 0
				err := retry.Loop(context.Background(), func(context.Context) error {
					if runs++; runs >= 2 && runs <= 5 {
						return nil
					}
					return errCrash
				}, policy.Constant(10*time.Second).WithMaxElapsed(25*time.Second).WithResetRule(r))
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.ErrorIs(t, err, retry.ErrExhausted)
				// The last success ends at 40s; failures at 50s and 60s;
				// the next pause would end 30s after that success.
				require.Equal(t, 2, re.Attempts, "failed runs in a row")
				require.Equal(t, 20*time.Second, re.Elapsed)
				require.Equal(t, 7, runs)
			})
		})
	}
}

// TestLoopWaitsOutAPushback: a server's "do not retry" ends Do, but Loop
// takes it as a failed run and comes back after its back-off.
func TestLoopWaitsOutAPushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		var at []time.Duration
		err := retry.Loop(ctx, func(context.Context) error {
			at = append(at, time.Since(start))
			if len(at) == 3 {
				cancel()
			}
			return fmt.Errorf("%w: overloaded", retry.ErrPushback)
		}, policy.Constant(time.Second))
		require.ErrorIs(t, err, context.Canceled)
		var e *retry.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, context.Canceled, e.Cause, "the Loop ended by its context, not by the pushback")
		require.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, at)

		calls := 0
		err = retry.Do(context.Background(), func(context.Context) error {
			calls++
			return fmt.Errorf("%w: overloaded", retry.ErrPushback)
		}, policy.Constant(time.Second))
		require.ErrorIs(t, err, retry.ErrPushback)
		require.Equal(t, 1, calls, "Do ends on a pushback")
	})
}

// A Loop whose next pause would pass its deadline ends at once, as its
// context ending would: it matches context.DeadlineExceeded, and not the
// context's cause, which the context does not carry yet.
func TestLoopEndsBeforeItsDeadlineWithoutItsCause(t *testing.T) {
	errCause := errors.New("budget spent")
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Hour, errCause)
	defer cancel()
	err := retry.Loop(ctx, func(context.Context) error { return errFlaky }, policy.Constant(2*time.Hour))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, retry.ErrExhausted)
	require.NotErrorIs(t, err, errCause)
	require.NoError(t, ctx.Err(), "it did not wait for the deadline")
}
