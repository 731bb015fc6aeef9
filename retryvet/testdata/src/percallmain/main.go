// Command percallmain: main lives as long as the program, so what it makes
// for its one call is not reported; a loop in it still is.
package main

import (
	"context"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func call(ctx context.Context) error { return nil }

func main() {
	ctx := context.Background()
	p := policy.Constant(time.Second).WithMaxAttempts(3)
	_ = retry.Do(ctx, call, p.WithGuard(policy.NewGuard(50, 1)))
	for i := 0; i < 3; i++ {
		_ = retry.Do(ctx, call, p.WithGuard(policy.NewGuard(50, 1))) // want `policy.NewGuard inside a loop`
	}
}
