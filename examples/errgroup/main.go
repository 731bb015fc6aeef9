// Command errgroup fans out over many items with retries: a real errgroup
// with a concurrency limit, a loopback HTTP server that fails at random, and
// a guard shared by every task so that a struggling server is not buried
// under retries.
//
//	go run ./examples/errgroup
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

const (
	items       = 400
	concurrency = 16
	failRate    = 0.3 // the share of requests the server answers with 503
)

func main() {
	log.SetFlags(0)
	var (
		mu  sync.Mutex
		rnd = rand.New(rand.NewPCG(1, 2))
	)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		mu.Lock()
		fail := rnd.Float64() < failRate
		mu.Unlock()
		if fail {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "item %s", r.URL.Query().Get("id"))
	}))
	defer srv.Close()

	// One guard, shared by every task: it admits retries while they pay
	// off, and holds them back when they would only add load.
	guard := policy.NewGuard(50, 1)
	p := policy.Exponential(2 * time.Millisecond).WithCap(50 * time.Millisecond).WithMaxAttempts(4).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithGuard(guard)
	fmt.Printf("policy: %v, %v, %d items, %d at a time, server failing %.0f%% of requests\n",
		p, guard, items, concurrency, failRate*100)

	var attempts, waits, refused, denied, exhausted, ok atomic.Int64
	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry:  func(context.Context, retry.RetryEvent) { waits.Add(1) },
		OnDenied: func(context.Context, retry.RetryEvent) { refused.Add(1) },
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			switch {
			case e.Err == nil:
				ok.Add(1)
			case errors.Is(e.Err, retry.ErrThrottled):
				denied.Add(1)
			case errors.Is(e.Err, retry.ErrExhausted):
				exhausted.Add(1)
			}
		},
	})

	// Each item is one line: retry.Go runs retry.Do in the group. A plain
	// Group lets every item run even after one fails, so the summary covers
	// them all; with errgroup.WithContext the first failure would cancel the
	// rest, and tasks waiting in a back-off would return at once.
	var g errgroup.Group
	g.SetLimit(concurrency)
	ctx := context.Background()
	start := time.Now()
	for id := range items {
		retry.Go(ctx, &g, func(ctx context.Context) error {
			attempts.Add(1)
			return fetch(ctx, srv.URL, id)
		}, p, hooks)
	}
	err := g.Wait()

	fmt.Printf("\ncalls: %d in %v\n", items, time.Since(start).Round(time.Millisecond))
	fmt.Printf("attempts: %d, requests served: %d\n", attempts.Load(), served.Load())
	fmt.Printf("waits before a retry: %d, retries the guard denied after their wait: %d\n", waits.Load(), refused.Load())
	fmt.Printf("succeeded: %d, gave up at the attempt limit: %d, stopped by the guard: %d\n", ok.Load(), exhausted.Load(), denied.Load())
	if err != nil {
		fmt.Printf("first error, as g.Wait returns it: %v\n", err)
	}
}

func fetch(ctx context.Context, base string, id int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/?id=%d", base, id), nil)
	if err != nil {
		return retry.Permanent(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("item %d: %s", id, resp.Status)
	}
	return nil
}
