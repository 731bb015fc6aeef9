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

func ExampleNewGuard() {
	// One guard per dependency, shared by every policy that calls it.
	inventory := policy.NewGuard(policy.DefaultGuardTokens, policy.DefaultGuardRatio)
	p := policy.Exponential(100 * time.Millisecond).WithCap(2 * time.Second).WithMaxAttempts(4).WithGuard(inventory)
	fmt.Println(p.Guard())

	// Package retry reports each attempt's outcome. Five failures in a row
	// leave half the tokens: no more retries until successes refill them.
	for range 5 {
		inventory.Failure()
	}
	fmt.Println(inventory.Tokens(), inventory.AllowRetry())
	for range 3 {
		inventory.Success()
	}
	fmt.Println(inventory.Tokens(), inventory.AllowRetry())
	// Output:
	// guard 10 tokens ratio 0.4
	// 5 false
	// 6.2 true
}
