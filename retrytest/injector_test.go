//go:build go1.25

package retrytest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
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

// Close ends a latency as it ends a stall: the call fails with ErrClosed.
func TestCloseEndsALatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Latency: time.Hour}))
		called := false
		op := retrytest.Wrap(in, func(context.Context) error { called = true; return nil })
		done := make(chan error, 1)
		go func() { done <- op(context.Background()) }()
		synctest.Wait()
		start := time.Now()
		in.Close()
		require.ErrorIs(t, <-done, retrytest.ErrClosed)
		require.Zero(t, time.Since(start), "at once")
		require.False(t, called)
	})
}

// Close turns the injector off for good: SetEnabled(true) after it does
// nothing, and every later call goes through untouched.
func TestSetEnabledAfterCloseDoesNothing(t *testing.T) {
	in := mustNew(t, forever(retrytest.Fault{Err: errors.New("boom")}))
	_, ok := in.Next(context.Background())
	require.True(t, ok, "an injector starts enabled")
	in.Close()
	in.SetEnabled(true)
	_, ok = in.Next(context.Background())
	require.False(t, ok, "SetEnabled(true) after Close re-armed the injector")
	require.Equal(t, retrytest.Counts{Calls: 2, Injected: 1, Errors: 1}, in.Counts())
}
