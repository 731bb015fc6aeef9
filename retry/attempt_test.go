//go:build go1.25

package retry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// numbers is an operation that records retry.Attempt of the context of
// every attempt, and fails until it has run succeedOn times.
type numbers struct {
	mu        sync.Mutex
	seen      []int
	succeedOn int
}

func (n *numbers) op(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, retry.Attempt(ctx))
	if len(n.seen) < n.succeedOn {
		return errFlaky
	}
	return nil
}

func (n *numbers) got() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]int(nil), n.seen...)
}

func TestAttemptNumbersEveryAttempt(t *testing.T) {
	zero := policy.Constant(0)
	var hooked []int
	hooks := retry.WithHooks(&retry.Hooks{OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
		hooked = append(hooked, e.Attempt)
		return nil
	}})
	for _, tt := range []struct {
		name string
		run  func(ctx context.Context, fn func(context.Context) error) error
	}{
		{"Do", func(ctx context.Context, fn func(context.Context) error) error {
			return retry.Do(ctx, fn, zero)
		}},
		{"DoValue", func(ctx context.Context, fn func(context.Context) error) error {
			_, err := retry.DoValue(ctx, func(ctx context.Context) (int, error) { return 0, fn(ctx) }, zero)
			return err
		}},
		{"Do with an attempt timeout", func(ctx context.Context, fn func(context.Context) error) error {
			return retry.Do(ctx, fn, zero.WithAttemptTimeout(time.Hour))
		}},
		{"Do with a deadline", func(ctx context.Context, fn func(context.Context) error) error {
			ctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			return retry.Do(ctx, fn, zero)
		}},
		{"Go", func(ctx context.Context, fn func(context.Context) error) error {
			var g errgroup.Group
			retry.Go(ctx, &g, fn, zero)
			return g.Wait()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := &numbers{succeedOn: 3}
			require.NoError(t, tt.run(context.Background(), n.op))
			require.Equal(t, []int{1, 2, 3}, n.got())
		})
	}
	t.Run("the hooks' number is the same", func(t *testing.T) {
		n := &numbers{succeedOn: 3}
		require.NoError(t, retry.Do(context.Background(), n.op, zero, hooks))
		require.Equal(t, []int{1, 2, 3}, n.got())
		require.Equal(t, n.got(), hooked)
	})
}

// A call made inside an attempt of another numbers its own attempts, its
// first one included, and leaves the outer attempt's number as it was.
func TestAttemptOfACallInsideAnother(t *testing.T) {
	zero := policy.Constant(0)
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"first try before the loop", zero},
		{"the loop makes every attempt", zero.WithAttemptTimeout(time.Hour)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inner := &numbers{succeedOn: 2}
			var after []int
			outer := &numbers{succeedOn: 2}
			err := retry.Do(context.Background(), func(ctx context.Context) error {
				if err := outer.op(ctx); err != nil {
					return err
				}
				if err := retry.Do(ctx, inner.op, tt.p); err != nil {
					return err
				}
				after = append(after, retry.Attempt(ctx))
				return nil
			}, zero)
			require.NoError(t, err)
			require.Equal(t, []int{1, 2}, outer.got())
			require.Equal(t, []int{1, 2}, inner.got(), "the inner call's own numbers")
			require.Equal(t, []int{2}, after, "the outer attempt's number afterwards")
		})
	}
}

func TestAttemptOfAContextNoCallGave(t *testing.T) {
	require.Equal(t, 1, retry.Attempt(context.Background()))
	//lint:ignore SA1012 a nil context is accepted on purpose
	require.Equal(t, 1, retry.Attempt(nil))
}

// Each run of a Loop is an attempt, and the number counts every run since
// the Loop started, the runs after a success too.
func TestAttemptInALoop(t *testing.T) {
	clk := retrytest.NewClock()
	var seen []int
	done := make(chan error, 1)
	go func() {
		done <- retry.Loop(context.Background(), func(ctx context.Context) error {
			seen = append(seen, retry.Attempt(ctx))
			switch len(seen) {
			case 3:
				return nil
			case 4:
				return retry.Permanent(errCrash)
			}
			return errFlaky
		}, policy.Constant(time.Second).WithClock(clk))
	}()
	for range 3 {
		require.Equal(t, time.Second, clk.Step(t))
	}
	require.ErrorIs(t, <-done, errCrash)
	require.Equal(t, []int{1, 2, 3, 4}, seen)
}

// A hedge runs on a context of its own, with its own number, which stays
// the same while the other attempt of the round runs on.
func TestAttemptOfAHedge(t *testing.T) {
	clk := retrytest.NewClock()
	var mu sync.Mutex
	var seen []int
	record := func(ctx context.Context) {
		mu.Lock()
		seen = append(seen, retry.Attempt(ctx))
		mu.Unlock()
	}
	slow, returned := make(chan struct{}), make(chan struct{})
	p := policy.Constant(time.Second).WithHedging(policy.Hedging{Delay: time.Second}).WithClock(clk)
	done := make(chan error, 1)
	go func() {
		done <- retry.Hedge(context.Background(), func(ctx context.Context) error {
			record(ctx)
			if retry.Attempt(ctx) == 1 {
				close(slow)
				<-ctx.Done() // until the hedge wins
				record(ctx)
				close(returned)
				return ctx.Err()
			}
			return nil
		}, p)
	}()
	<-slow
	require.Equal(t, time.Second, clk.Step(t), "the hedge delay")
	require.NoError(t, <-done)
	<-returned // the slow attempt, once cancelled
	require.Equal(t, []int{1, 2, 1}, seen)
}
