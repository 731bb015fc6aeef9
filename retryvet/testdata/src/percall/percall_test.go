package percall

import (
	"context"
	"testing"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// A test makes its own guard on purpose: test files are not checked.
func TestFreshGuards(t *testing.T) {
	for i := 0; i < 3; i++ {
		g := policy.NewGuard(50, 1)
		if err := retry.Do(context.Background(), call, p.WithGuard(g)); err != nil {
			t.Fatal(err)
		}
	}
}
