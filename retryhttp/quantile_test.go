//go:build go1.25

package retryhttp_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
)

// A policy that hedges after a quantile and carries no guard is accepted:
// the Transport gives it its own guard, which learns from the hedged
// requests. Once it has an estimate, the hedge starts after it.
func TestHedgedAfterTheQuantileOfTheTransportsOwnGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{closed: make(chan string, 64)}
		slowFirst := false
		s.answer = func(i int, req *http.Request) (*http.Response, error) {
			if slowFirst && i == 21 {
				<-req.Context().Done() // the slow attempt, until the hedge wins
				return nil, req.Context().Err()
			}
			time.Sleep(10 * time.Millisecond)
			return s.respond(http.StatusOK, "ok"), nil
		}
		p := policy.Constant(time.Millisecond).WithMaxAttempts(2).WithHedging(policy.Hedging{Delay: time.Hour, Quantile: 0.5})
		tr, err := retryhttp.New(s, p)
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		for range 20 { // ten above the median: the estimate starts
			resp, err := client.Get("http://example.invalid/")
			require.NoError(t, err)
			require.Equal(t, "ok", body(t, resp))
		}
		slowFirst = true
		start := time.Now()
		resp, err := client.Get("http://example.invalid/")
		require.NoError(t, err)
		require.Equal(t, "ok", body(t, resp))
		const edge = 10485760 * time.Nanosecond // the upper edge of the bucket that holds 10ms
		require.Equal(t, edge+10*time.Millisecond, time.Since(start), "the hedge starts after the estimate, not after Delay")
		synctest.Wait()
	})
}
