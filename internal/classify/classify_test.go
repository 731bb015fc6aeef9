//go:build go1.25

package classify_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

var errFlaky = errors.New("flaky")

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want classify.Verdict
	}{
		{"nil", nil, classify.Verdict{Outcome: admit.Succeeded}},
		{"plain", errFlaky, classify.Verdict{Outcome: admit.Failed}},
		{"permanent", retry.Permanent(errFlaky), classify.Verdict{Permanent: true, Outcome: admit.Failed}},
		{"hint", retry.After(time.Second, errFlaky), classify.Verdict{Hinted: true, Hint: time.Second, Outcome: admit.Overloaded}},
		{"outermost hint wins", retry.After(time.Second, fmt.Errorf("x: %w", retry.After(time.Hour, errFlaky))),
			classify.Verdict{Hinted: true, Hint: time.Second, Outcome: admit.Overloaded}},
		{"hint in a join", errors.Join(errFlaky, retry.After(-time.Second, errFlaky)),
			classify.Verdict{Hinted: true, Hint: -time.Second, Outcome: admit.Overloaded}},
		{"permanent hint", retry.Permanent(retry.After(time.Second, errFlaky)),
			classify.Verdict{Permanent: true, Hinted: true, Hint: time.Second, Outcome: admit.Overloaded}},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), classify.Verdict{Timeout: true, Outcome: admit.Overloaded}},
		{"cancelled", context.Canceled, classify.Verdict{Outcome: admit.Failed}},
		{"pushback", fmt.Errorf("%w: %w", retry.ErrPushback, errFlaky), classify.Verdict{Pushback: true, Outcome: admit.Overloaded}},
		{"attempt timeout", fmt.Errorf("x: %w", retry.ErrAttemptTimeout), classify.Verdict{Timeout: true, Outcome: admit.Overloaded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, classify.Of(tt.err)) })
	}
}

// TestOfAgreesWithTheLoop: an attempt timeout of the loop's own is a
// timeout to Of, as the loop's guard hears it.
func TestOfAgreesWithTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := policy.Constant(0).WithMaxAttempts(1).WithAttemptTimeout(time.Second)
		err := retry.Do(context.Background(), func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, p)
		var re *retry.Error
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, re.Last, retry.ErrAttemptTimeout)
		require.Equal(t, admit.Overloaded, classify.Of(re.Last).Outcome)
		require.True(t, classify.Of(re.Last).Timeout)
	})
}
