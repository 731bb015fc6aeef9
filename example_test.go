package retrykit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// instant is a policy.Clock on which every wait ends at once, so that the
// example shows the kubelet's waits without taking them. Tests use
// retrytest's Clock instead, which also tells them when a wait starts.
type instant struct{}

func (instant) Now() time.Time { return time.Unix(0, 0) }

func (instant) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Unix(0, 0)
	return ch
}

// The tour in one call: an operation that fails twice, retried under the
// kubelet back-off (10s, then 20s, …), with hooks that say what happens.
func Example() {
	calls := 0
	fetch := func(ctx context.Context) error {
		if calls++; calls < 3 {
			return errors.New("connection refused")
		}
		return nil
	}
	hooks := &retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d failed (%v); waiting %v\n", e.Attempt, e.Err, e.Delay)
		},
	}
	p := policy.Default().WithMaxAttempts(5).WithClock(instant{})
	err := retry.Do(context.Background(), fetch, p, retry.WithHooks(hooks))
	fmt.Println("calls:", calls, "error:", err)
	// Output:
	// attempt 1 failed (connection refused); waiting 10s
	// attempt 2 failed (connection refused); waiting 20s
	// calls: 3 error: <nil>
}
