//go:build go1.25

package retryhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

func ExampleNew() {
	// A loopback server that is unavailable twice, then answers.
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		if n <= 2 {
			fmt.Printf("request %d: 503\n", n)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		fmt.Printf("request %d: 200\n", n)
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	// Zero delays keep the example quick; real code would use a back-off
	// such as policy.Default().WithMaxAttempts(4).
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(4))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	// Output:
	// request 1: 503
	// request 2: 503
	// request 3: 200
	// 200 OK hello
}

func ExampleNew_invalidPolicy() {
	// A policy from a configuration file that makes no sense is an error
	// where the Transport is built, not on every request.
	_, err := retryhttp.New(nil, policy.Exponential(10*time.Second).WithCap(time.Second))
	fmt.Println(err)
	fmt.Println(errors.Is(err, policy.ErrInvalid))
	// Output:
	// retryhttp: policy: invalid cap: 1s is below the base delay 10s
	// true
}

// Hooks passed through WithRetryOptions observe each retry, and a server's
// Retry-After is honoured. The policy runs on a virtual clock whose waits
// end at once, so that the example shows the 30s wait without taking it.
func ExampleWithRetryOptions() {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	p := policy.Default().WithMaxAttempts(4).WithClock(newVirtualClock())
	tr, err := retryhttp.New(nil, p, retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(ctx context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d: %v; waiting %v (server's hint: %v)\n", e.Attempt, e.Err, e.Delay, e.Hinted)
		},
	})))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	// Output:
	// attempt 1: status 429 Too Many Requests; waiting 30s (server's hint: true)
	// 200 OK hello
}

// virtualClock is a policy.Clock on which every wait ends at once, its time
// moved on by the wait. It serves one call at a time.
type virtualClock struct{ now time.Time }

func newVirtualClock() *virtualClock {
	return &virtualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *virtualClock) Now() time.Time { return c.now }

func (c *virtualClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func ExampleHandler() {
	// A leaf that sheds every request, and a mid behind Handler that calls it.
	leafSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusTooManyRequests)
	}))
	defer leafSrv.Close()
	p := policy.Constant(time.Millisecond).WithMaxAttempts(4)
	toLeaf, err := retryhttp.New(nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	leaf := &http.Client{Transport: toLeaf}
	midSrv := httptest.NewServer(retryhttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, leafSrv.URL, nil)
		resp, err := leaf.Do(req) // on the request's context: the Handler hears how it ended
		if err != nil || resp.StatusCode != http.StatusOK {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_ = resp.Body.Close()
	})))
	defer midSrv.Close()

	toMid, err := retryhttp.New(nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The first requests could be bad luck: the mid's guard has not yet
	// seen 16 overloaded attempts in a row, so the mid asks for no
	// pushback, and its caller retries. Once it has, the mid asks its
	// caller not to retry.
	for i := 1; i <= 3; i++ {
		resp, err := (&http.Client{Transport: toMid}).Get(midSrv.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		_ = resp.Body.Close()
		fmt.Printf("request %d: %s, pushback %q, not retried: %v\n", i, resp.Status,
			resp.Header.Get("Retry-Pushback"), errors.Is(retryhttp.Err(resp), retry.ErrPushback))
	}
	// Output:
	// request 1: 503 Service Unavailable, pushback "", not retried: false
	// request 2: 503 Service Unavailable, pushback "", not retried: false
	// request 3: 503 Service Unavailable, pushback "never", not retried: true
}
