package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// TestBackoffOnTheClock tests retrying code as a user's test does, with
// package retrytest's clock: each wait is seen, then the clock moves by it.
func TestBackoffOnTheClock(t *testing.T) {
	clk := retrytest.NewClock()
	p := policy.Exponential(time.Second).WithMaxAttempts(3).WithClock(clk)
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), func(context.Context) error {
			return errors.New("unavailable")
		}, p)
	}()
	for _, want := range []time.Duration{time.Second, 2 * time.Second} {
		if got := clk.Step(t); got != want {
			t.Fatalf("wait = %v, want %v", got, want)
		}
	}
	if err := <-done; !errors.Is(err, retry.ErrExhausted) {
		t.Fatalf("Do() = %v, want an error matching retry.ErrExhausted", err)
	}
}
