package limit

import (
	"context"
	"testing"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// go test's timeout bounds a test's calls: test files are not checked.
func TestEventually(t *testing.T) {
	if err := retry.Do(context.Background(), call, policy.Default()); err != nil {
		t.Fatal(err)
	}
}
