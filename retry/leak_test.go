//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// parkedSignal returns hooks that report each wait about to start.
func parkedSignal() (retry.Option, <-chan struct{}) {
	ch := make(chan struct{}, 1024)
	return retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { ch <- struct{}{} }}), ch
}

// Each test cancels calls parked in a long real-clock wait and then checks
// that no goroutine is left behind. Timers cannot be counted from outside the
// runtime; the call stops its one timer as it returns.
func TestNoLeakAfterCancelledDo(t *testing.T) {
	opt, parked := parkedSignal()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- retry.Do(ctx, fails(100, errFlaky).op, policy.Constant(time.Hour), opt) }()
	<-parked
	cancel()
	require.ErrorIs(t, result(t, done), context.Canceled)
	goleak.VerifyNone(t)
}

func TestNoLeakAfterCancelledLoop(t *testing.T) {
	opt, parked := parkedSignal()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- retry.Loop(ctx, succeed, policy.Constant(time.Hour), opt) }()
	<-parked
	cancel()
	require.ErrorIs(t, result(t, done), context.Canceled)
	goleak.VerifyNone(t)
}

func TestNoLeakAfterGroupFanOut(t *testing.T) {
	opt, parked := parkedSignal()
	g, ctx := errgroup.WithContext(context.Background())
	errFatal := errors.New("fatal")
	for range 50 {
		retry.Go(ctx, g, fails(100, errFlaky).op, policy.Constant(time.Hour), opt)
	}
	for range 50 {
		<-parked
	}
	retry.Go(ctx, g, func(context.Context) error { return retry.Permanent(errFatal) }, policy.Default())
	require.Same(t, errFatal, g.Wait())
	goleak.VerifyNone(t)
}

func TestNoLeakWithAttemptTimeouts(t *testing.T) {
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}, policy.Constant(0).WithAttemptTimeout(time.Millisecond).WithMaxAttempts(3))
	require.ErrorIs(t, err, retry.ErrAttemptTimeout)
	goleak.VerifyNone(t)
}
