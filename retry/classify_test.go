//go:build go1.25

package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want retry.Verdict
	}{
		{"nil", nil, retry.Verdict{Outcome: policy.Succeeded}},
		{"plain", errFlaky, retry.Verdict{Outcome: policy.Failed}},
		{"permanent", retry.Permanent(errFlaky), retry.Verdict{Permanent: true, Outcome: policy.Failed}},
		{"hint", retry.After(time.Second, errFlaky), retry.Verdict{Hinted: true, Hint: time.Second, Outcome: policy.Overloaded}},
		{"outermost hint wins", retry.After(time.Second, fmt.Errorf("x: %w", retry.After(time.Hour, errFlaky))),
			retry.Verdict{Hinted: true, Hint: time.Second, Outcome: policy.Overloaded}},
		{"hint in a join", errors.Join(errFlaky, retry.After(-time.Second, errFlaky)),
			retry.Verdict{Hinted: true, Hint: -time.Second, Outcome: policy.Overloaded}},
		{"permanent hint", retry.Permanent(retry.After(time.Second, errFlaky)),
			retry.Verdict{Permanent: true, Hinted: true, Hint: time.Second, Outcome: policy.Overloaded}},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), retry.Verdict{Timeout: true, Outcome: policy.Overloaded}},
		{"cancelled", context.Canceled, retry.Verdict{Outcome: policy.Failed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, retry.Classify(tt.err)) })
	}
}

// TestClassifyAgreesWithTheLoop: an attempt timeout of the loop's own is a
// timeout to Classify, as the loop's guard hears it.
func TestClassifyAgreesWithTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(0).WithMaxAttempts(1).WithAttemptTimeout(time.Second)
		err := retry.Do(context.Background(), func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, p)
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, re.Last, retry.ErrAttemptTimeout)
		require.Equal(t, policy.Overloaded, retry.Classify(re.Last).Outcome)
		require.True(t, retry.Classify(re.Last).Timeout)
	})
}
