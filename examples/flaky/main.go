// Command flaky shows retry.DoValue at work against a real, flaky
// dependency: a loopback HTTP server that answers 503 to its first requests,
// called with the kubelet back-off scaled down from seconds to milliseconds.
//
//	go run ./examples/flaky
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// failures is how many requests the server refuses before it recovers.
const failures = 4

func main() {
	log.SetFlags(0)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= failures {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "hello from a recovered server")
	}))
	defer srv.Close()

	// The kubelet's 10s ×2 capped at 300s, in milliseconds, and at most six
	// attempts (the first call counts).
	p := policy.Exponential(10 * time.Millisecond).WithCap(300 * time.Millisecond).WithMaxAttempts(6)
	fmt.Printf("policy: %v\n", p)

	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d failed after %v: %v; waiting %v\n", e.Attempt, e.Elapsed.Round(time.Millisecond), e.Err, e.Delay)
		},
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			fmt.Printf("done after %d attempts in %v: err = %v\n", e.Attempts, e.Elapsed.Round(time.Millisecond), e.Err)
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return get(ctx, srv.URL)
	}, p, hooks)
	if err != nil {
		log.Printf("gave up: %v", err)
		os.Exit(1)
	}
	fmt.Printf("body: %s", body)

	// The same call against a server that never recovers: the attempt limit
	// ends it, and the error keeps the server's last answer.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	_, err = retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return get(ctx, down.URL)
	}, p.WithMaxAttempts(3))
	fmt.Printf("against a server that stays down:\n  %v\n  errors.Is(err, retry.ErrExhausted) = %v, errors.Is(err, errUnavailable) = %v\n",
		err, errors.Is(err, retry.ErrExhausted), errors.Is(err, errUnavailable))
}

var errUnavailable = errors.New("service unavailable")

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", retry.Permanent(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		return "", fmt.Errorf("%s: %w", resp.Status, errUnavailable)
	case resp.StatusCode != http.StatusOK:
		return "", retry.Permanent(fmt.Errorf("unexpected %s", resp.Status))
	}
	return string(b), nil
}
