package retrytest_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrytest"
)

// The two sides of a Clock. The code under test, given a policy with the
// clock, calls After when it backs off; the test learns of that wait and
// advances the clock by it. In a test, Step(t) does both (the package
// documentation shows a whole test); here Waits counts the waits started.
func ExampleClock() {
	clk := retrytest.NewClock()
	p := policy.Default()

	// What retry.Do does, given p.WithClock(clk), after a failed attempt: a
	// 10s back-off on the policy's clock.
	woken := clk.After(p.Backoff(1, 0))

	fmt.Println("waits started:", clk.Waits())
	clk.Add(10 * time.Second)
	fmt.Println("woken at", (<-woken).Sub(time.Unix(0, 0)))
	// Output:
	// waits started: 1
	// woken at 10s
}
