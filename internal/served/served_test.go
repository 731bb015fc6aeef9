package served_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/served"
)

var errDown = errors.New("down")

func TestNilRecordSaysNothing(t *testing.T) {
	var none *served.Record
	require.False(t, none.Pushback(), "a nil Record asks no pushback")
	require.Zero(t, none.Previous())
	require.False(t, none.Unreached(errDown))
	none.Tell(served.Repeat) // records nothing, and does not panic
	require.Nil(t, served.From(context.Background()))
	require.Zero(t, served.PreviousAttempts(context.Background()))
}

func TestServeRecordsPrevious(t *testing.T) {
	for _, tt := range []struct{ previous, want int }{{0, 0}, {3, 3}, {-2, 0}} {
		ctx, r := served.Serve(context.Background(), tt.previous, nil)
		require.Same(t, r, served.From(ctx))
		require.Equal(t, tt.want, r.Previous(), "Serve(%d)", tt.previous)
		require.Equal(t, tt.want, served.PreviousAttempts(ctx), "Serve(%d)", tt.previous)
	}
}

func TestLastVerdictCounts(t *testing.T) {
	_, r := served.Serve(context.Background(), 0, nil)
	require.False(t, r.Pushback(), "nothing failed")
	r.Tell(served.Repeat)
	require.True(t, r.Pushback())
	r.Tell(served.Retry)
	require.False(t, r.Pushback(), "the call that failed last decides")
}

func TestUnreachedAsksTheServerSide(t *testing.T) {
	_, none := served.Serve(context.Background(), 1, nil)
	require.False(t, none.Unreached(errDown), "no judge: nothing is unreached")
	_, r := served.Serve(context.Background(), 1, func(err error) bool { return errors.Is(err, errDown) })
	require.True(t, r.Unreached(errDown))
	require.False(t, r.Unreached(errors.New("answered")))
	require.False(t, r.Unreached(nil))
}
