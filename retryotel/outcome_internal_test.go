package retryotel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

func TestClassify(t *testing.T) {
	errOp := errors.New("boom")
	tests := []struct {
		err  error
		want outcome
	}{
		{nil, success},
		{errOp, permanent},
		{fmt.Errorf("wrapped: %w", context.Canceled), permanent}, // the operation's own error
		{&retry.Error{Attempts: 3, Cause: retry.ErrExhausted, Last: errOp}, exhausted},
		{&retry.Error{Attempts: 3, Cause: retry.ErrExhausted, Last: context.Canceled}, exhausted},
		{&retry.Error{Attempts: 1, Cause: retry.ErrThrottled, Last: errOp}, throttled},
		{&retry.Error{Cause: retry.ErrShed}, shed},
		{&retry.Error{Attempts: 2, Cause: context.Canceled, Last: errOp}, cancelled},
		{&retry.Error{Attempts: 2, Cause: context.DeadlineExceeded, Last: errOp}, deadline},
		{&retry.Error{Attempts: 1, Cause: retry.ErrHintTooLong, Last: errOp}, hintTooLong},
		{&retry.Error{Attempts: 1, Cause: retry.ErrExhausted, Last: retry.ErrHintTooLong}, exhausted},
		{fmt.Errorf("retryhttp: GET /: %w", &retry.Error{Attempts: 2, Cause: retry.ErrExhausted}), exhausted},
		{&retry.Error{Cause: errors.New("something new")}, permanent},
		{retry.Do(context.Background(), nil, policy.Default()), invalid},
		{retry.Do(context.Background(), func(context.Context) error { return nil }, policy.Constant(-1)), invalid},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.err), func(t *testing.T) {
			require.Equal(t, tt.want.String(), classify(tt.err).String())
		})
	}
}

// A hinted wait under the hint ceiling that would pass the deadline ends
// the call by a limit, matching the deadline and ErrHintTooLong too: the
// hint is what the outcome says.
func TestClassifyHintPastTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	err := retry.Do(ctx, func(context.Context) error { return retry.After(2*time.Hour, errors.New("busy")) }, policy.Constant(0).WithMaxHint(3*time.Hour))
	var e *retry.Error
	require.ErrorAs(t, err, &e)
	require.ErrorIs(t, e.Cause, retry.ErrExhausted)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, retry.ErrHintTooLong)
	require.Equal(t, "hint_too_long", classify(err).String())
}

// A call whose next wait would pass its deadline ends by a limit: its
// outcome is exhausted, as its error matches retry.ErrExhausted. Only a
// context that passed its deadline is the deadline outcome.
func TestClassifyWaitPastTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	err := retry.Do(ctx, func(context.Context) error { return errors.New("busy") }, policy.Constant(2*time.Hour))
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, "exhausted", classify(err).String())
}
