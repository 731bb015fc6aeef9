//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

var errFlaky = errors.New("flaky")

// kubeletStarts are the offsets at which the default policy starts attempts.
var kubeletStarts = []time.Duration{0, 10e9, 30e9, 70e9, 150e9, 310e9, 610e9, 910e9}

// recorder is an operation that always fails and records when each attempt
// started, by the clock it is given.
type recorder struct {
	now    func() time.Time
	origin time.Time
	mu     sync.Mutex
	starts []time.Duration
}

func (r *recorder) op(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, r.now().Sub(r.origin))
	return fmt.Errorf("attempt %d: %w", len(r.starts), errFlaky)
}

func TestKubeletSequenceUnderMockClock(t *testing.T) {
	clk := clocktest.NewCounted()
	rec := &recorder{now: clk.Now, origin: clk.Now()}
	p := policy.Default().WithClock(clk).WithMaxAttempts(len(kubeletStarts))
	ctx, cancel := clk.WithTimeout(context.Background(), 24*time.Hour) // a deadline: the call is timed
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- retry.Do(ctx, rec.op, p) }()

	for i := 1; i < len(kubeletStarts); i++ {
		want := kubeletStarts[i] - kubeletStarts[i-1]
		require.Equal(t, want, clk.Step(t), "wait after attempt %d", i)
	}
	err := result(t, done)
	require.Equal(t, kubeletStarts, rec.starts)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errFlaky)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 8, re.Attempts)
	require.Equal(t, 910*time.Second, re.Elapsed)
	require.EqualError(t, err, "retry: gave up after 8 attempts in 15m10s: attempt 8: flaky")
	require.Equal(t, 7, clk.Waits(), "no wait after the final attempt")
}

func TestKubeletSequenceUnderSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{now: time.Now, origin: time.Now()}
		err := retry.Do(t.Context(), rec.op, policy.Default().WithMaxAttempts(len(kubeletStarts)))
		require.Equal(t, kubeletStarts, rec.starts)
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.ErrorIs(t, err, errFlaky)
		require.Equal(t, 910*time.Second, time.Since(rec.origin))
	})
}

// script is an operation that returns its errors in turn, then nil.
type script struct {
	errs  []error
	calls atomic.Int32
}

func (s *script) op(context.Context) error {
	n := int(s.calls.Add(1))
	if n <= len(s.errs) {
		return s.errs[n-1]
	}
	return nil
}

func fails(n int, err error) *script {
	s := &script{}
	for range n {
		s.errs = append(s.errs, err)
	}
	return s
}

func TestStopConditions(t *testing.T) {
	inner := errors.New("bad request")
	wrappedPermanent := fmt.Errorf("call: %w", retry.Permanent(inner))
	errUnretryable := errors.New("unretryable")
	onlyFlaky := func(err error) bool { return errors.Is(err, errFlaky) }
	zero := policy.Constant(0)

	tests := []struct {
		name      string
		op        *script
		p         policy.Policy
		wantCalls int
		check     func(t *testing.T, err error)
	}{
		{"first-try success", fails(0, nil), zero, 1, func(t *testing.T, err error) { require.NoError(t, err) }},
		{"success after failures", fails(3, errFlaky), zero, 4, func(t *testing.T, err error) { require.NoError(t, err) }},
		{"permanent returns the inner error itself", &script{errs: []error{errFlaky, retry.Permanent(inner)}}, zero, 2,
			func(t *testing.T, err error) { require.Same(t, inner, err) }},
		{"wrapped permanent returned as it is", &script{errs: []error{wrappedPermanent}}, zero, 1,
			func(t *testing.T, err error) {
				require.Same(t, wrappedPermanent, err)
				require.ErrorIs(t, err, inner)
			}},
		{"permanent inside a join", &script{errs: []error{errors.Join(errFlaky, retry.Permanent(inner))}}, zero, 1,
			func(t *testing.T, err error) { require.ErrorIs(t, err, inner) }},
		{"error the policy does not retry", &script{errs: []error{errFlaky, errUnretryable}}, zero.WithRetryIf(onlyFlaky), 2,
			func(t *testing.T, err error) { require.Same(t, errUnretryable, err) }},
		{"attempt limit", fails(10, errFlaky), zero.WithMaxAttempts(3), 3,
			func(t *testing.T, err error) {
				require.ErrorIs(t, err, retry.ErrExhausted)
				require.ErrorIs(t, err, errFlaky)
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.Equal(t, 3, re.Attempts)
				require.Same(t, errFlaky, re.Last)
			}},
		{"one attempt means no retry", fails(10, errFlaky), zero.WithMaxAttempts(1), 1,
			func(t *testing.T, err error) {
				require.ErrorIs(t, err, retry.ErrExhausted)
				require.EqualError(t, err, "retry: gave up after 1 attempt: flaky", "a call that never waited reads no clock")
			}},
		{"success on the last allowed attempt", fails(2, errFlaky), zero.WithMaxAttempts(3), 3,
			func(t *testing.T, err error) { require.NoError(t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.NewCounted()
			err := retry.Do(context.Background(), tt.op.op, tt.p.WithClock(clk))
			tt.check(t, err)
			require.Equal(t, tt.wantCalls, int(tt.op.calls.Load()), "calls")
			require.Zero(t, clk.Waits(), "a zero delay retries without a timer")
		})
	}
}

func TestInvalidCalls(t *testing.T) {
	called := false
	fn := func(context.Context) error { called = true; return nil }
	tests := []struct {
		name string
		run  func() error
		also error
	}{
		{"nil function", func() error { return retry.Do(context.Background(), nil, policy.Default()) }, nil},
		{"nil context", func() error { return retry.Do(nilContext, fn, policy.Default()) }, nil},
		{"invalid policy", func() error { return retry.Do(context.Background(), fn, policy.Default().WithCap(-1)) }, policy.ErrInvalid},
		{"nil value function", func() error {
			_, err := retry.DoValue[int](context.Background(), nil, policy.Default())
			return err
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			require.ErrorIs(t, err, policy.ErrInvalid)
			if tt.also != nil {
				require.ErrorIs(t, err, tt.also)
			}
			require.False(t, called, "fn must not run")
		})
	}
}

func TestCancelledBeforeTheFirstAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	op := fails(0, nil)
	err := retry.Do(ctx, op.op, policy.Default())
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, op.calls.Load(), "fn must not be called")
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Zero(t, re.Attempts)
	require.EqualError(t, err, "retry: context canceled before the first attempt")
}

func TestCancelWhileWaitingReturnsAtOnce(t *testing.T) {
	clk := clocktest.NewCounted()
	ctx, cancel := context.WithCancelCause(context.Background())
	errShutdown := errors.New("shutting down")
	op := fails(100, io.ErrUnexpectedEOF)

	done := make(chan error, 1)
	go func() { done <- retry.Do(ctx, op.op, policy.Default().WithClock(clk)) }()
	require.Equal(t, 10*time.Second, clk.Step(t))
	require.Equal(t, 20*time.Second, clk.NextWait(t))
	cancel(errShutdown) // the mock clock never reaches the timer: Do must not wait for it

	err := result(t, done)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, errShutdown)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the last error survives cancellation")
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 2, re.Attempts)
	require.Zero(t, re.Elapsed, "nothing times the call: no deadline, time limit or hooks")
	require.EqualError(t, err, "retry: context canceled after 2 attempts: cause: shutting down: unexpected EOF")
}

func TestNeverStartsAWaitPastTheDeadline(t *testing.T) {
	clk := clocktest.NewCounted()
	ctx, cancel := clk.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	op := fails(100, errFlaky)

	done := make(chan error, 1)
	go func() { done <- retry.Do(ctx, op.op, policy.Constant(10*time.Second).WithClock(clk)) }()
	clk.Step(t)
	clk.Step(t)
	// At t=20s the next wait would end at 30s, after the 25s deadline.
	err := result(t, done)
	require.ErrorIs(t, err, retry.ErrExhausted, "the deadline is a limit")
	require.ErrorIs(t, err, context.DeadlineExceeded, "as before ErrExhausted covered it")
	require.ErrorIs(t, err, errFlaky)
	require.NoError(t, ctx.Err(), "the call ended before its context did")
	require.Equal(t, 3, int(op.calls.Load()))
	require.Equal(t, 2, clk.Waits(), "the wait past the deadline is never started")
	require.Contains(t, err.Error(), "gave up after 3 attempts in 20s (the next wait of 10s would not end before the deadline)")
}

func TestElapsedLimit(t *testing.T) {
	clk := clocktest.NewCounted()
	op := fails(100, errFlaky)
	p := policy.Constant(10 * time.Second).WithMaxElapsed(25 * time.Second).WithClock(clk)
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op.op, p) }()
	clk.Step(t)
	clk.Step(t)
	err := result(t, done)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errFlaky)
	require.Equal(t, 3, int(op.calls.Load()))
	require.Equal(t, 2, clk.Waits())
	require.EqualError(t, err, "retry: gave up after 3 attempts in 20s (the next wait of 10s would pass the 25s limit): flaky")
}

func TestElapsedLimitCountsFromEachCall(t *testing.T) {
	clk := clocktest.NewCounted()
	p := policy.Constant(10 * time.Second).WithMaxElapsed(15 * time.Second).WithClock(clk)
	for call := range 3 {
		clk.Add(time.Hour) // time passing between calls must not count
		op := fails(1, errFlaky)
		done := make(chan error, 1)
		go func() { done <- retry.Do(context.Background(), op.op, p) }()
		require.Equal(t, 10*time.Second, clk.Step(t), "call %d", call)
		require.NoError(t, result(t, done), "call %d", call)
	}
}

func TestElapsedCountsFromTheStartOfTheCall(t *testing.T) {
	// The first attempt takes 20s: the time limit and Elapsed count it, so
	// a 25s limit allows no 10s wait after it.
	clk := clocktest.NewCounted()
	first := true
	op := func(context.Context) error {
		if first {
			first = false
			clk.Add(20 * time.Second)
		}
		return errFlaky
	}
	err := retry.Do(context.Background(), op, policy.Constant(10*time.Second).WithMaxElapsed(25*time.Second).WithClock(clk))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.EqualError(t, err, "retry: gave up after 1 attempt in 20s (the next wait of 10s would pass the 25s limit): flaky")
	require.Zero(t, clk.Waits())
}

// A 400ms time limit bounds the whole call, when its first attempt takes
// 300ms too (it once counted from that attempt's end, and let the call run
// 650ms).
func TestTimeLimitCountsTheFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{
			{Fault: retrytest.Fault{Latency: 300 * time.Millisecond, Err: errFlaky}, Times: 1}, {Fault: retrytest.Fault{Err: errFlaky}},
		}})
		require.NoError(t, err)
		start := time.Now()
		err = retry.Do(context.Background(), retrytest.Wrap(in, succeed), policy.Constant(50*time.Millisecond).WithMaxElapsed(400*time.Millisecond))
		require.ErrorIs(t, err, retry.ErrExhausted)
		require.LessOrEqual(t, time.Since(start), 400*time.Millisecond)
		require.Equal(t, 3, in.Counts().Calls, "300ms, then two retries 50ms apart; a third wait would end at 450ms")
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 400*time.Millisecond, re.Elapsed)
	})
}

// Elapsed after a slow first attempt that ends the call is that attempt's
// time, not 0.
func TestElapsedAfterASlowFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		err := retry.Do(ctx, func(ctx context.Context) error {
			time.Sleep(100 * time.Millisecond)
			return errFlaky
		}, policy.Constant(time.Second))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.Equal(t, 100*time.Millisecond, re.Elapsed)
		require.Contains(t, err.Error(), "after 1 attempt in 100ms")
	})
}

// TestElapsedIsTheSameWhateverTimesTheCall runs one failing call, whose
// attempts take 5s each, with recording hooks and with a deadline: Elapsed
// is the time from the start of the call to its end, 15s plus the waits,
// every time. With no options or empty hooks nothing times the call: its
// Elapsed is 0 and its message names no time.
func TestElapsedIsTheSameWhateverTimesTheCall(t *testing.T) {
	for _, delay := range []time.Duration{0, 10 * time.Second} {
		for _, opt := range []string{"none", "empty hooks", "hooks", "deadline"} {
			t.Run(fmt.Sprintf("%v/%s", delay, opt), func(t *testing.T) {
				clk := newVClock()
				op := func(context.Context) error { clk.Advance(5 * time.Second); return errFlaky }
				p := policy.Constant(delay).WithMaxAttempts(3).WithClock(clk)
				ctx := context.Background()
				var opts []retry.Option
				var ev events
				switch opt {
				case "empty hooks":
					opts = append(opts, retry.WithHooks(&retry.Hooks{}))
				case "hooks":
					opts = append(opts, retry.WithHooks(ev.hooks()))
				case "deadline":
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, clk.Now().Add(time.Hour))
					defer cancel()
				}
				err := retry.Do(ctx, op, p, opts...)
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				want := 15*time.Second + 2*delay
				if opt == "none" || opt == "empty hooks" {
					want = 0
					require.NotContains(t, err.Error(), " in ")
				} else {
					require.Contains(t, err.Error(), fmt.Sprintf("in %v", want))
				}
				require.Equal(t, want, re.Elapsed)
				if opt == "hooks" {
					require.Len(t, ev.dones, 1)
					require.Equal(t, want, ev.dones[0].Elapsed)
				}
			})
		}
	}
}

func TestPanicPassesThrough(t *testing.T) {
	require.PanicsWithValue(t, "boom", func() {
		_ = retry.Do(context.Background(), func(context.Context) error { panic("boom") }, policy.Default())
	})
}

func TestPermanentNil(t *testing.T) {
	require.NoError(t, retry.Permanent(nil))
}

func TestDoValue(t *testing.T) {
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errFlaky}, Times: 2}, {}}})
	require.NoError(t, err)
	whole := func(context.Context) (string, error) { return "whole", nil }
	v, err := retry.DoValue(context.Background(), retrytest.WrapValue(in, whole), policy.Constant(0))
	require.NoError(t, err)
	require.Equal(t, "whole", v)

	v, err = retry.DoValue(context.Background(), func(context.Context) (string, error) {
		return "last response", errFlaky
	}, policy.Constant(0).WithMaxAttempts(2))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Equal(t, "last response", v, "the last attempt's value is kept")
}

func TestRealTimerOnTheRealClock(t *testing.T) {
	// Tiny real waits: the real-clock path, timer reuse included.
	op := fails(3, errFlaky)
	err := retry.Do(context.Background(), op.op, policy.Constant(time.Microsecond))
	require.NoError(t, err)
	require.Equal(t, 4, int(op.calls.Load()))
}

func TestOnePolicySharedByManyGoroutines(t *testing.T) {
	p := policy.Exponential(time.Microsecond).WithCap(10 * time.Microsecond).WithMaxAttempts(4)
	var wg sync.WaitGroup
	var exhausted, succeeded atomic.Int32
	for i := range 1000 {
		wg.Go(func() {
			op := fails(i%5, errFlaky) // 0..4 failures: 4 is one too many for 4 attempts
			err := retry.Do(context.Background(), op.op, p)
			switch {
			case err == nil:
				succeeded.Add(1)
				if int(op.calls.Load()) != i%5+1 {
					t.Errorf("goroutine %d: %d calls, want %d", i, op.calls.Load(), i%5+1)
				}
			case errors.Is(err, retry.ErrExhausted):
				exhausted.Add(1)
				if op.calls.Load() != 4 {
					t.Errorf("goroutine %d: %d calls, want 4", i, op.calls.Load())
				}
			default:
				t.Errorf("goroutine %d: Do() = %v", i, err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(800), succeeded.Load())
	require.Equal(t, int32(200), exhausted.Load())
}

// result waits for Do's result, failing the test rather than hanging if Do
// does not return within a (generous) real-time bound.
func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Do did not return")
		return nil
	}
}

// countingClock counts its readings.
type countingClock struct {
	*vclock
	reads atomic.Int32
}

func (c *countingClock) Now() time.Time { c.reads.Add(1); return c.vclock.Now() }

// A call that nothing times reads no clock on a first-try success; one
// that something times (a deadline, a time limit, hooks) reads it once, at
// its start.
func TestFirstTrySuccessReadsNoClock(t *testing.T) {
	ctx := context.Background()
	for _, p := range []policy.Policy{
		policy.Default(),
		policy.Constant(0).WithMaxAttempts(3),
		policy.Default().WithResetRule(policy.ResetRule{AfterIdle: time.Hour}),
		policy.Default().WithGuard(policy.NewGuard(10, 0.5)),
	} {
		clk := &countingClock{vclock: newVClock()}
		p := p.WithClock(clk)
		require.NoError(t, retry.Do(ctx, succeed, p))
		_, err := retry.DoValue(ctx, func(context.Context) (int, error) { return 1, nil }, p)
		require.NoError(t, err)
		require.Zero(t, clk.reads.Load(), "%v", p)
	}
	clk := &countingClock{vclock: newVClock()}
	p := policy.Default().WithClock(clk)
	deadline, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	require.NoError(t, retry.Do(deadline, succeed, p))
	require.NoError(t, retry.Do(ctx, succeed, p.WithMaxElapsed(time.Minute)))
	require.NoError(t, retry.Do(ctx, succeed, p, retry.WithHooks(&retry.Hooks{OnDone: func(context.Context, retry.DoneEvent) {}})))
	require.EqualValues(t, 4, clk.reads.Load(), "one reading per timed call at its start, and one more for OnDone's Elapsed")
}

func TestImmediateRetriesHandOverToTheSchedule(t *testing.T) {
	// A schedule of 0, 0, then 5s: the first two retries are immediate, and
	// the schedule goes on at its third delay, whatever path made the first.
	clk := clocktest.NewCounted()
	s := backoff.ScheduleFunc(func(n int) time.Duration {
		if n <= 2 {
			return 0
		}
		return 5 * time.Second
	})
	op := fails(4, errFlaky)
	done := make(chan error, 1)
	go func() { done <- retry.Do(context.Background(), op.op, policy.Custom(s).WithClock(clk)) }()
	require.Equal(t, 5*time.Second, clk.Step(t), "the third delay")
	require.Equal(t, 5*time.Second, clk.Step(t))
	require.NoError(t, result(t, done))
	require.EqualValues(t, 5, op.calls.Load())
	require.Equal(t, 2, clk.Waits())

	// A Permanent error and one the policy does not retry end immediate
	// retries as they end any other.
	errStop := errors.New("stop")
	p := policy.Constant(0).WithRetryIf(func(err error) bool { return !errors.Is(err, errStop) })
	require.Same(t, errStop, retry.Do(context.Background(), (&script{errs: []error{errFlaky, errFlaky, errStop}}).op, p))
	require.Same(t, errStop, retry.Do(context.Background(), (&script{errs: []error{errFlaky, retry.Permanent(errStop)}}).op, policy.Constant(0)))
}

// tickingClock moves on by a microsecond at every Now, so that any second
// reading of it shows.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Microsecond)
	return c.now
}

func (c *tickingClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// TestElapsedOfACallStoppedAtItsFirstAttempt: a call that nothing times
// reports an Elapsed of 0 and names no time, whatever stops it; a timed one
// counts its first attempt.
func TestElapsedOfACallStoppedAtItsFirstAttempt(t *testing.T) {
	for name, tt := range map[string]struct {
		p     policy.Policy
		err   error
		cause error
		timed bool
	}{
		"attempt limit": {policy.Constant(time.Second).WithMaxAttempts(1), errFlaky, retry.ErrExhausted, false},
		"time limit":    {policy.Constant(time.Second).WithMaxElapsed(time.Nanosecond), errFlaky, retry.ErrExhausted, true},
		"hint ceiling":  {policy.Constant(time.Second).WithMaxHint(time.Millisecond), retry.After(time.Hour, errFlaky), retry.ErrHintTooLong, false},
	} {
		clk := &tickingClock{now: time.Unix(0, 0)}
		err := retry.Do(context.Background(), fails(1, tt.err).op, tt.p.WithClock(clk))
		var re *retry.Error
		require.ErrorAs(t, err, &re, name)
		require.ErrorIs(t, err, tt.cause, name)
		require.Equal(t, 1, re.Attempts, name)
		if tt.timed {
			require.Positive(t, re.Elapsed, name)
			continue
		}
		require.Zero(t, re.Elapsed, name)
		require.NotContains(t, err.Error(), " in ", name)
	}
}

// An attempt that wraps only the context's error leaves the failure
// before it as the last error; one that joins an error of its own to the
// context's is the last error itself (see Error.Last), and so is one that
// returns a deadline of its own, not the call's.
func TestLastErrorOfAnAttemptThatWrapsTheContextsError(t *testing.T) {
	err503, errDrained := errors.New("attempt 1: 503"), errors.New("drained")
	ownDeadline := func(ctx context.Context) error {
		inner, stop := context.WithTimeout(context.WithoutCancel(ctx), 0) // the backend call's own, already over
		defer stop()
		return fmt.Errorf("backend call: %w", inner.Err())
	}
	for _, tt := range []struct {
		name string
		ret  func(ctx context.Context) error // after the call was cancelled
		last error
	}{
		{"the context's error", func(ctx context.Context) error { return ctx.Err() }, err503},
		{"wrapped alone", func(ctx context.Context) error { return fmt.Errorf("reading: %w", ctx.Err()) }, err503},
		{"joined to its own", func(ctx context.Context) error { return fmt.Errorf("%w: %w", errDrained, ctx.Err()) }, errDrained},
		{"errors.Join", func(ctx context.Context) error { return errors.Join(errDrained, ctx.Err()) }, errDrained},
		{"a deadline of its own", ownDeadline, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			err := retry.Do(ctx, func(ctx context.Context) error {
				if n++; n == 1 {
					return err503
				}
				cancel()
				return tt.ret(ctx)
			}, policy.Constant(0))
			require.ErrorIs(t, err, context.Canceled)
			var re *retry.Error
			require.ErrorAs(t, err, &re)
			require.ErrorIs(t, re.Last, tt.last)
		})
	}
}

// An attempt that the caller's context cut off ends the call as the context
// ending does, even under a policy that retries no error: what the policy
// says of the context's error does not matter. The cause is named once.
func TestAttemptCutOffByTheCallerEndsAsTheContext(t *testing.T) {
	errShutdown, errOwn := errors.New("shutting down"), errors.New("reset by peer")
	for name, p := range map[string]policy.Policy{
		"retries every error": policy.Constant(time.Millisecond),
		"retries none":        policy.Constant(time.Millisecond).WithRetryIf(func(error) bool { return false }),
	} {
		for _, tt := range []struct {
			name string
			ret  func(ctx context.Context) error // after the call was cancelled
			last error
			msg  string // the whole message, when it is checked
		}{
			{"the cause", context.Cause, errShutdown, "retry: context canceled after 1 attempt: shutting down"},
			{"joined to an error of its own", func(ctx context.Context) error { return errors.Join(errOwn, ctx.Err()) }, errOwn, ""},
		} {
			t.Run(name+", "+tt.name, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(context.Background())
				err := retry.Do(ctx, func(ctx context.Context) error {
					cancel(errShutdown)
					return tt.ret(ctx)
				}, p)
				require.ErrorIs(t, err, context.Canceled)
				require.ErrorIs(t, err, errShutdown)
				require.ErrorIs(t, err, tt.last)
				var re *retry.Error
				require.ErrorAs(t, err, &re)
				require.Equal(t, context.Canceled, re.Cause)
				if tt.msg != "" {
					require.EqualError(t, err, tt.msg)
				}
			})
		}
	}
}
