// Command hedge shows hedged calls cutting the slow tail: 2,000 GETs by
// 20 callers to a loopback server that answers in 10 ms, and in 1 s for
// 2 % of requests (the latency scenario of the tests). It prints the latency
// percentiles without hedging and with a hedge after the running p95, and
// how many requests each call cost; losing responses are drained and closed
// through HedgeValue's discard. The times are real, so a busy machine's
// scheduling delays show in them; internal/tail measures the scenario on
// synctest's virtual time.
//
//	go run ./examples/hedge
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

const (
	calls   = 2_000
	callers = 20
	fast    = 10 * time.Millisecond
	slow    = time.Second
)

func main() {
	log.SetFlags(0)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		d := fast
		if n%50 == 7 { // 2 % of requests, spread evenly
			d = slow
		}
		select {
		case <-time.After(d):
			fmt.Fprint(w, "ok")
		case <-r.Context().Done(): // the client gave up on this request
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * callers}}
	defer client.CloseIdleConnections()

	get := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return nil, retry.Permanent(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			release(resp)
			return nil, fmt.Errorf("status %s", resp.Status)
		}
		return resp, nil
	}
	var discarded, released atomic.Int64
	discard := func(resp *http.Response) {
		discarded.Add(1)
		if resp != nil { // nil: the request was cancelled in flight
			released.Add(1)
			release(resp)
		}
	}

	plain := policy.Constant(10 * time.Millisecond).WithMaxAttempts(3)
	// The guard keeps the running p95 of the hedged attempts' latency: give
	// one guard to every policy that calls the same server.
	hedged := plain.WithGuard(policy.NewGuard(50, 1)).WithHedging(policy.Hedging{Quantile: 0.95})
	// A hedge's Wait is its hedge delay: the estimate when it started.
	var hedgeDelay atomic.Int64
	hooks := retry.WithHooks(&retry.Hooks{OnAttempt: func(ctx context.Context, e retry.AttemptEvent) context.Context {
		if e.Hedge {
			hedgeDelay.Store(int64(e.Wait))
		}
		return ctx
	}})

	fmt.Printf("%d GETs by %d callers; the server answers in %v, and in %v for 2%% of requests\n\n", calls, callers, fast, slow)
	fmt.Printf("%-18s %9s %9s %9s %9s %9s  %s\n", "", "p50", "p90", "p99", "p99.9", "max", "requests per call")
	for _, mode := range []struct {
		name string
		call func(context.Context) (*http.Response, error)
	}{
		{"without hedging", func(ctx context.Context) (*http.Response, error) {
			return retry.DoValue(ctx, get, plain) // get releases what it does not return
		}},
		{"hedged after p95", func(ctx context.Context) (*http.Response, error) {
			return retry.HedgeValue(ctx, get, hedged, discard, hooks)
		}},
	} {
		before := requests.Load()
		lats := run(mode.call)
		reqs := float64(requests.Load()-before) / calls
		fmt.Printf("%-18s %9v %9v %9v %9v %9v  %.3f\n", mode.name,
			pct(lats, 0.5), pct(lats, 0.9), pct(lats, 0.99), pct(lats, 0.999), pct(lats, 1), reqs)
	}
	fmt.Printf("\nthe last hedge delay (the running p95 estimate): %v\n", time.Duration(hedgeDelay.Load()).Round(time.Microsecond))
	fmt.Printf("values discarded: %d (%d responses drained and closed, the other requests cancelled in flight)\n", discarded.Load(), released.Load())
}

// run makes the calls and returns their latencies in increasing order.
func run(call func(context.Context) (*http.Response, error)) []time.Duration {
	var (
		next atomic.Int64
		mu   sync.Mutex
		lats = make([]time.Duration, 0, calls)
		wg   sync.WaitGroup
	)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= calls {
				start := time.Now()
				resp, err := call(context.Background())
				if err != nil {
					log.Fatal(err)
				}
				release(resp)
				took := time.Since(start)
				mu.Lock()
				lats = append(lats, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lats)
	return lats
}

// release reads a response's body to its end and closes it, so that its
// connection can serve another request.
func release(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

func pct(lats []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(lats))+0.999999) - 1
	return lats[min(max(i, 0), len(lats)-1)].Round(10 * time.Microsecond)
}
