package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrytest"
)

// The peers' rows of retry at one layer (see docs/layers.md): the chain
// client → edge → mid → leaf of internal/layers, every hop a
// go-retryablehttp client of 4 attempts (RetryMax 3), waiting 10 ms
// doubling to 100 ms, on the in-memory network inside a testing/synctest
// bubble. go-retryablehttp sends no signal and reads none.

// peerLeaf answers 503 while down, and a third of its requests at random
// while partial.
type peerLeaf struct {
	down, partial atomic.Bool
	calls         atomic.Int64
}

func (l *peerLeaf) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.calls.Add(1)
	if l.down.Load() || (l.partial.Load() && rand.IntN(3) == 0) {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	_, _ = fmt.Fprint(w, "ok")
}

// peerClient is a hop's go-retryablehttp client of srv.
func peerClient(srv *httptest.Server) *http.Client {
	c := retryablehttp.NewClient()
	c.HTTPClient = srv.Client()
	c.HTTPClient.Timeout = time.Second // the attempt timeout
	c.RetryMax, c.RetryWaitMin, c.RetryWaitMax = 3, 10*time.Millisecond, 100*time.Millisecond
	c.Logger = nil
	return c.StandardClient()
}

// peerHop forwards each request to next, answering 503 when that fails.
func peerHop(c *http.Client, next string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, next, nil)
		resp, err := c.Do(req)
		if err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprint(w, "ok")
	})
}

// peerChain starts leaf, mid and edge in memory, and returns the user's
// client and the edge's URL.
func peerChain(t *testing.T, leaf *peerLeaf) (*http.Client, string) {
	leafSrv := retrytest.NewServer(leaf)
	midSrv := retrytest.NewServer(peerHop(peerClient(leafSrv), leafSrv.URL))
	edgeSrv := retrytest.NewServer(peerHop(peerClient(midSrv), midSrv.URL))
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{edgeSrv, midSrv, leafSrv} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	return peerClient(edgeSrv), edgeSrv.URL
}

func TestLayersRetryablehttp(t *testing.T) {
	var attempts []int64
	var times []time.Duration
	synctest.Test(t, func(t *testing.T) {
		leaf := &peerLeaf{}
		leaf.down.Store(true)
		user, url := peerChain(t, leaf)
		for range 20 {
			before, start := leaf.calls.Load(), time.Now()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
			if resp, err := user.Do(req); err == nil {
				_ = resp.Body.Close()
			}
			times = append(times, time.Since(start))
			attempts = append(attempts, leaf.calls.Load()-before)
		}
	})
	var ok int
	synctest.Test(t, func(t *testing.T) {
		leaf := &peerLeaf{}
		leaf.partial.Store(true)
		user, url := peerChain(t, leaf)
		for range 1000 {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
			if resp, err := user.Do(req); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok++
				}
			}
		}
	})
	var sum int64
	for _, a := range attempts {
		sum += a
	}
	slices.Sort(times)
	t.Logf("go-retryablehttp at every hop: leaf attempts %v (most %d, mean %.2f), p99 %v; partial success %.1f %%",
		attempts, slices.Max(attempts), float64(sum)/20, times[19], float64(ok)/10)
	require.Greater(t, float64(sum)/20, 10.0, "every layer retrying multiplies")
}
