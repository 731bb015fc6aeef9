package sleep

import (
	"context"
	"testing"
	"time"

	"github.com/retrykit/retrykit/retry"
)

// A test may make an operation slow on purpose: test files are not checked.
func TestSlowOperation(t *testing.T) {
	_ = retry.Do(context.Background(), func(ctx context.Context) error {
		time.Sleep(time.Millisecond)
		return call(ctx)
	}, p)
}
