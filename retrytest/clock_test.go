//go:build go1.25

package retrytest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

var _ policy.Clock = (*retrytest.Clock)(nil)

func TestNextWaitSeesEveryAfterInOrder(t *testing.T) {
	clk := clocktest.NewCounted()
	a := clk.After(time.Second)
	b := clk.After(3 * time.Second)
	require.Equal(t, time.Second, clk.NextWait(t))
	require.Equal(t, 3*time.Second, clk.NextWait(t))
	require.Equal(t, 2, clk.Waits())

	clk.Add(time.Second)
	select {
	case <-a:
	default:
		t.Fatal("a 1s timer did not fire after advancing 1s")
	}
	select {
	case <-b:
		t.Fatal("a 3s timer fired after 1s")
	default:
	}
}

func TestWithTimeoutExpiresOnTheClock(t *testing.T) {
	clk := clocktest.NewCounted()
	ctx, cancel := clk.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deadline, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, clk.Now().Add(time.Minute), deadline, "the deadline is on the clock's time")
	clk.Add(time.Minute - time.Second)
	require.NoError(t, ctx.Err(), "a second before the deadline")
	clk.Add(time.Second)
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	require.Zero(t, clk.Waits(), "a timeout is no wait for NextWait")
}

func TestNextWaitBlocksUntilAfterIsCalled(t *testing.T) {
	clk := clocktest.NewCounted()
	go func() {
		time.Sleep(time.Millisecond)
		clk.After(7 * time.Second)
	}()
	require.Equal(t, 7*time.Second, clk.NextWait(t))
}

func TestStepWakesTheWaiter(t *testing.T) {
	clk := clocktest.NewCounted()
	start := clk.Now()
	woke := make(chan time.Time, 1)
	go func() { woke <- <-clk.After(5 * time.Second) }()
	require.Equal(t, 5*time.Second, clk.Step(t))
	require.Equal(t, start.Add(5*time.Second), <-woke)
}

// fakeTB records a failure instead of ending the goroutine.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestNextWaitFailsTheTestWhenNoWaitComes(t *testing.T) {
	clk := clocktest.NewCounted()
	clk.Patience = 5 * time.Millisecond
	tb := &fakeTB{TB: t}
	require.Zero(t, clk.NextWait(tb))
	require.Equal(t, "retrytest: no wait started within 5ms", tb.failed)
}

func TestStepDrivesDo(t *testing.T) {
	clk := clocktest.NewCounted()
	errDown := errors.New("down")
	calls := 0
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), func(context.Context) error {
			calls++
			if calls < 4 {
				return errDown
			}
			return nil
		}, policy.Default().WithClock(clk))
	}()
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		require.Equal(t, want, clk.Step(t))
	}
	require.NoError(t, <-done)
	require.Equal(t, 4, calls)
}

// A policy's attempt timeout runs on the Clock's WithTimeout, which does not
// signal: the test sees the stall strike, and ends it with Add.
func TestAttemptTimeoutIsNoWaitForStep(t *testing.T) {
	clk := clocktest.NewCounted()
	struck := make(chan struct{}, 2)
	p := forever(retrytest.Fault{Stall: true})
	p.OnInject = func(context.Context, retrytest.Injection) { struck <- struct{}{} }
	in := mustNew(t, p)
	t.Cleanup(in.Close)
	op := retrytest.Wrap(in, func(context.Context) error { return nil })
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), op, policy.Constant(0).WithMaxAttempts(2).WithAttemptTimeout(time.Minute).WithClock(clk))
	}()
	for range 2 {
		<-struck
		require.Zero(t, clk.Waits(), "the attempt timeout started no wait that Step sees")
		clk.Add(time.Minute)
	}
	require.ErrorIs(t, <-done, retry.ErrAttemptTimeout)
}
