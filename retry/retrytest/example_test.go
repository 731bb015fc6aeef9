package retrytest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retry/retrytest"
)

// In a real test, t comes from the test function.
var t = &testing.T{}

func ExampleClock() {
	clk := retrytest.NewClock()
	attempt := 0
	done := make(chan error, 1)
	go func() {
		done <- retry.Do(context.Background(), func(context.Context) error {
			attempt++
			if attempt < 3 {
				return errors.New("connection refused")
			}
			return nil
		}, policy.Default().WithClock(clk))
	}()
	fmt.Println("first back-off:", clk.Step(t))
	fmt.Println("second back-off:", clk.Step(t))
	fmt.Println("Do:", <-done, "after", attempt, "attempts")
	// Output:
	// first back-off: 10s
	// second back-off: 20s
	// Do: <nil> after 3 attempts
}
