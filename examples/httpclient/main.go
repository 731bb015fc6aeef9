// Command httpclient retries HTTP requests with a plain http.Client whose
// Transport is retryhttp's: a loopback server answers 503 a few times (once
// with a Retry-After header, which the client honours), then 200.
//
//	go run ./examples/httpclient
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

func main() {
	log.SetFlags(0)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := hits.Add(1)
		fmt.Printf("  server: request %d: %s %s, body %q\n", n, r.Method, r.URL.Path, body)
		switch n {
		case 1:
			w.Header().Set("Retry-After", "1") // come back in a second
			http.Error(w, "rate limited", http.StatusServiceUnavailable)
		case 2, 3:
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		default:
			fmt.Fprintf(w, "stored %s", body)
		}
	}))
	defer srv.Close()

	p := policy.Exponential(100 * time.Millisecond).WithCap(2 * time.Second).WithMaxAttempts(5).
		WithJitter(backoff.Jitter{Kind: backoff.Equal})
	tr, err := retryhttp.New(nil, p, retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			why := "the schedule"
			if e.Hinted {
				why = "the server's Retry-After"
			}
			fmt.Printf("  client: attempt %d: %v; waiting %v, from %s\n", e.Attempt, e.Err, e.Delay.Round(time.Millisecond), why)
		},
	})))
	if err != nil {
		log.Fatal(err) // an unusable policy is reported here, once
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	fmt.Printf("policy: %v\n", p)

	// A PUT is safe to repeat: its body is sent again, whole, on each retry.
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/items/42", strings.NewReader(`{"name":"retrykit"}`))
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("final: %s after %v: %s\n", resp.Status, time.Since(start).Round(10*time.Millisecond), b)

	// An unusable policy is reported once, where the Transport is built,
	// rather than on every request.
	_, err = retryhttp.New(nil, policy.Exponential(time.Second).WithCap(10*time.Millisecond))
	fmt.Printf("a bad policy: %v\n", err)
}
