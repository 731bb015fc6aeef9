package retry_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func statuses(codes ...int) func(context.Context) (int, error) {
	i := 0
	return func(context.Context) (int, error) {
		c := codes[min(i, len(codes)-1)]
		i++
		return c, nil
	}
}

var retryUnavailable = retry.RetryIfValue(func(code int, err error) bool {
	return err != nil || code == http.StatusServiceUnavailable
})

func TestRetryIfValue(t *testing.T) {
	code, err := retry.DoValue(context.Background(), statuses(503, 503, 200), policy.Constant(0), retryUnavailable)
	require.NoError(t, err)
	require.Equal(t, 200, code)
}

func TestRetryIfValueExhaustedKeepsTheLastValue(t *testing.T) {
	code, err := retry.DoValue(context.Background(), statuses(503), policy.Constant(0).WithMaxAttempts(3).WithClock(newVClock()), retryUnavailable)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, retry.ErrRejected)
	require.Equal(t, 503, code)
	require.EqualError(t, err, "retry: gave up after 3 attempts: retry: value rejected")
}

func TestRetryIfValueFalseEndsTheCall(t *testing.T) {
	errBad := errors.New("bad")
	calls := 0
	never := retry.RetryIfValue(func(int, error) bool { return false })
	code, err := retry.DoValue(context.Background(), func(context.Context) (int, error) {
		calls++
		return 400, errBad
	}, policy.Constant(0), never)
	require.Same(t, errBad, err, "returned as it is")
	require.Equal(t, 400, code)
	require.Equal(t, 1, calls)
}

func TestRetryIfValueTakesPrecedenceOverThePolicyPredicate(t *testing.T) {
	p := policy.Constant(0).WithRetryIf(func(error) bool { return false })
	code, err := retry.DoValue(context.Background(), statuses(503, 200), p, retryUnavailable)
	require.NoError(t, err)
	require.Equal(t, 200, code)
}

func TestRetryIfValueMisplaced(t *testing.T) {
	err := retry.Do(context.Background(), succeed, policy.Default(), retryUnavailable)
	require.ErrorIs(t, err, retry.ErrInvalid)
	_, err = retry.DoValue(context.Background(), func(context.Context) (string, error) { return "", nil }, policy.Default(), retryUnavailable)
	require.ErrorIs(t, err, retry.ErrInvalid)
	err = retry.Loop(context.Background(), succeed, policy.Default(), retryUnavailable)
	require.ErrorIs(t, err, retry.ErrInvalid)
	require.Equal(t, retry.Option{}, retry.RetryIfValue[int](nil), "a nil predicate is no option")
}
