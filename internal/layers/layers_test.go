//go:build go1.25

package layers_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/layers"
)

// TestGoals runs every scenario inside a testing/synctest bubble, on the
// in-memory network, and checks the goals of retry at one layer.
func TestGoals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tab, err := layers.RunAll(layers.InMemory)
		require.NoError(t, err)
		t.Log("\n" + tab.String())
		s, every, none := layers.Signal, layers.EveryLayer, layers.NoRetry

		require.LessOrEqual(t, tab.Down[s].Max(), int64(10), "leaf attempts of every request")
		require.LessOrEqual(t, tab.Down[s].Mean(), 5.0, "leaf attempts per request, on average")
		require.Greater(t, tab.Down[every].Mean(), 10.0, "the scenario can fail: every layer retrying multiplies")
		require.LessOrEqual(t, tab.Down[s].P99(), tab.Down[every].P99()/2, "time to a definite answer")
		// Once the mid's guard holds retries back, a request costs at most
		// 1.2 × one hop's retry sequence: its three waits, 10 + 20 + 40 ms
		// at the most under full jitter.
		oneHop := 70 * time.Millisecond
		require.LessOrEqual(t, slices.Max(tab.Down[s].Times[10:]), oneHop*12/10, "time to a definite answer once the guard has learnt")

		require.Zero(t, tab.Outage[s].FailedFrom(layers.OutageReturn), "every request after the leaf's return succeeds")
		require.LessOrEqual(t, tab.Outage[s].LastFailure(layers.OutageReturn), time.Second, "no failure later than 1 s after the return")

		require.GreaterOrEqual(t, tab.Partial[s].Success(), tab.Partial[every].Success()-0.001, "a partial failure is still rescued upstream")
		require.Less(t, tab.Partial[none].Success(), 0.9, "the scenario can fail: without retries a third fail")

		require.LessOrEqual(t, tab.Overload[s].Recovered(layers.OverloadEnd), tab.Overload[none].Recovered(layers.OverloadEnd)+time.Second)

		require.GreaterOrEqual(t, tab.Mid[s].Success(), tab.Mid[every].Success()-0.005, "the edge still retries the mid")
	})
}
