package policy_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
)

func ExampleDefault() {
	p := policy.Default()
	fmt.Println(p)
	for n := 1; n <= 7; n++ {
		fmt.Print(p.Delay(n), " ")
	}
	fmt.Println()
	// Output:
	// exponential 10s x2 cap 5m0s
	// 10s 20s 40s 1m20s 2m40s 5m0s 5m0s
}

func ExamplePolicy_Validate() {
	p := policy.Exponential(10 * time.Second).WithCap(time.Second)
	fmt.Println(p.Validate())
	// Output: policy: invalid cap: 1s is below the base delay 10s
}

func ExamplePolicy_WithMaxAttempts() {
	// Attempts count the first call: this policy calls at most three times.
	p := policy.Exponential(100 * time.Millisecond).WithFactor(1.6).WithCap(2 * time.Second).WithMaxAttempts(3)
	fmt.Println(p)
	// Output: exponential 100ms x1.6 cap 2s attempts 3
}
