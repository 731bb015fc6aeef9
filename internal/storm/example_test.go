package storm_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/internal/storm"
)

// A short storm on the virtual clock: 8 s of traffic, the stall from 5 s to
// 7 s, with calls that are never retried.
func ExampleRunVirtual() {
	s := storm.Storm()
	s.Duration = 8 * time.Second
	r := storm.RunVirtual(s, storm.Retrying().WithMaxAttempts(1))
	fmt.Println(r.Calls, "calls,", r.Attempts, "attempts")
	fmt.Println("goodput per second:", r.Goodput)
	// Output:
	// 6400 calls, 6400 attempts
	// goodput per second: [1 1 1 1 1 0 0 0]
}
