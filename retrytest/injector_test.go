package retrytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrytest"
)

// A nil *Injector, as New returns with its error, fails the calls it would
// decide on and panics in none of its methods, so that a test that missed
// New's error learns why from the error rather than from a nil dereference.
func TestNilInjector(t *testing.T) {
	var in *retrytest.Injector
	require.NotPanics(t, func() {
		in.SetEnabled(false)
		in.Close()
		in.Close()
		require.Equal(t, retrytest.Counts{}, in.Counts())
	})
	f, ok := in.Next(context.Background())
	require.True(t, ok, "the call gets a fault")
	require.EqualError(t, f.Err, "retrytest: nil *Injector (New returned an error?)")
	err := in.Wait(context.Background(), retrytest.Fault{Latency: time.Hour})
	require.EqualError(t, err, "retrytest: nil *Injector (New returned an error?)")
}
