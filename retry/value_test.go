package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

var errUnavailable = errors.New("unavailable")

// statuses answers the codes in turn (the last for ever) and rejects a 503
// by returning it with an error of its own: value-based retry.
func statuses(codes ...int) func(context.Context) (int, error) {
	i := 0
	return func(context.Context) (int, error) {
		c := codes[min(i, len(codes)-1)]
		i++
		if c == http.StatusServiceUnavailable {
			return c, fmt.Errorf("status %d: %w", c, errUnavailable)
		}
		return c, nil
	}
}

func TestDoValueRetriesAValueRejectedWithAnError(t *testing.T) {
	code, err := retry.DoValue(context.Background(), statuses(503, 503, 200), policy.Constant(0))
	require.NoError(t, err)
	require.Equal(t, 200, code)
}

func TestDoValueExhaustedKeepsTheLastValue(t *testing.T) {
	code, err := retry.DoValue(context.Background(), statuses(503), policy.Constant(0).WithMaxAttempts(3).WithClock(newVClock()))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, errUnavailable)
	require.Equal(t, 503, code)
	require.EqualError(t, err, "retry: gave up after 3 attempts: status 503: unavailable")
}

func TestDoValueNotRetriedByThePolicyKeepsTheValue(t *testing.T) {
	errBad := errors.New("bad")
	calls := 0
	p := policy.Constant(0).WithRetryIf(func(err error) bool { return errors.Is(err, errUnavailable) })
	code, err := retry.DoValue(context.Background(), func(context.Context) (int, error) {
		calls++
		return 400, errBad
	}, p)
	require.Same(t, errBad, err, "returned as it is")
	require.Equal(t, 400, code)
	require.Equal(t, 1, calls)
}
