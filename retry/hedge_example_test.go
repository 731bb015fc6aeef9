package retry_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// The first attempt hangs; after the hedge delay a second one is started
// beside it, answers, and wins. The first attempt's context is cancelled.
func ExampleHedgeValue() {
	p := policy.Constant(time.Second).WithMaxAttempts(3).
		WithHedging(policy.Hedging{Delay: time.Millisecond})
	var n atomic.Int32
	get := func(ctx context.Context) (string, error) {
		if n.Add(1) == 1 {
			<-ctx.Done() // a replica stuck in a pause, until the call gives up on it
			return "", ctx.Err()
		}
		return "page", nil
	}
	hooks := retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) {
		fmt.Printf("attempts %d, hedges %d, won by attempt %d\n", e.Attempts, e.Hedges, e.Won)
	}})
	discarded := make(chan string, 1)
	discard := func(v string) { discarded <- v } // the loser's value, on its own goroutine
	v, err := retry.HedgeValue(context.Background(), get, p, discard, hooks)
	fmt.Println(v, err)
	fmt.Printf("discarded %q\n", <-discarded)
	// Output:
	// attempts 2, hedges 1, won by attempt 2
	// page <nil>
	// discarded ""
}
