package retrytest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// The two sides of a Clock. The code under test, given a policy with the
// clock, calls After when it backs off; the test learns of that wait and
// advances the clock by it. In a test, NextWait(t) learns of the wait and
// Step(t) also advances by it (the package documentation shows a whole
// test); here Add advances the clock by hand.
func ExampleClock() {
	clk := retrytest.NewClock()
	p := policy.Default()

	// What retry.Do does, given p.WithClock(clk), after a failed attempt: a
	// 10s back-off on the policy's clock.
	woken := clk.After(p.Backoff(1, 0))

	clk.Add(10 * time.Second)
	fmt.Println("woken at", (<-woken).Sub(time.Unix(0, 0)))
	// Output:
	// woken at 10s
}

// instant is a clock whose waits end at once, moving its time on by them:
// examples cannot run in a testing/synctest bubble, which needs a
// *testing.T. The tests of this package run the same programs in bubbles.
type instant struct {
	mu  sync.Mutex
	now time.Time
}

func (c *instant) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *instant) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// A client that must ride out 503s with Retry-After: the server answers
// its first two requests with 503 and Retry-After: 2, and the client,
// retryhttp's Transport, waits the two seconds each time asks for.
func ExampleInjector_Handler() {
	clk := &instant{now: time.Unix(0, 0)}
	in, err := retrytest.New(retrytest.Plan{
		Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: 2 * time.Second}, Times: 2}, {}},
		Clock: clk,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(in.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})))
	defer srv.Close()
	defer in.Close()

	// The client under test.
	tr, err := retryhttp.New(nil, policy.Default().WithClock(clk), retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d: %v; waiting %v (hinted: %v)\n", e.Attempt, e.Err, e.Delay, e.Hinted)
		},
	})))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s after %v: %s", resp.Status, clk.Now().Sub(time.Unix(0, 0)), text)
	fmt.Println("503s sent:", in.Counts().Statuses)
	// Output:
	// attempt 1: status 503 Service Unavailable; waiting 2s (hinted: true)
	// attempt 2: status 503 Service Unavailable; waiting 2s (hinted: true)
	// 200 OK after 4s: hello
	// 503s sent: 2
}

// A consumer Loop that must ride out a broker outage: the injector is
// switched on after two messages and off again after four failed runs.
func ExampleInjector_SetEnabled() {
	in, err := retrytest.New(retrytest.Plan{
		Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errors.New("broker unavailable")}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	in.SetEnabled(false)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	consumed := 0
	consume := retrytest.Wrap(in, func(context.Context) error {
		consumed++
		fmt.Println("consumed message", consumed)
		switch consumed {
		case 2:
			fmt.Println("-- the broker goes down")
			in.SetEnabled(true)
		case 4:
			cancel()
		}
		return nil
	})
	failed := 0
	hooks := &retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) {
		if e.Err == nil {
			return
		}
		fmt.Printf("run %d: %v; waiting %v\n", e.Attempt, e.Err, e.Delay)
		if failed++; failed == 4 {
			fmt.Println("-- the broker is back")
			in.SetEnabled(false)
		}
	}}
	p := policy.Exponential(time.Second).WithClock(&instant{})
	err = retry.Loop(ctx, consume, p, retry.WithHooks(hooks))
	fmt.Println("Loop:", errors.Is(err, context.Canceled), "faults:", in.Counts().Injected)
	// Output:
	// consumed message 1
	// consumed message 2
	// -- the broker goes down
	// run 3: broker unavailable; waiting 2s
	// run 4: broker unavailable; waiting 4s
	// run 5: broker unavailable; waiting 8s
	// run 6: broker unavailable; waiting 16s
	// -- the broker is back
	// consumed message 3
	// consumed message 4
	// Loop: true faults: 4
}

// A script: fail twice with a server's hint, then once with a reset
// connection, then go through. A script that ends must say what comes
// after it.
func ExampleNew() {
	in, err := retrytest.New(retrytest.Plan{
		Steps: []retrytest.Step{
			{Fault: retrytest.Fault{Err: errors.New("busy"), Hint: 3 * time.Second}, Times: 2},
			{Fault: retrytest.Fault{Reset: true}, Times: 1},
			{}, // then every call goes through
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	op := retrytest.Wrap(in, func(context.Context) error { return nil })
	p := policy.Constant(time.Second).WithClock(&instant{})
	err = retry.Do(context.Background(), op, p, retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d: %v; waiting %v\n", e.Attempt, e.Err, e.Delay)
		},
	}))
	c := in.Counts()
	fmt.Printf("Do: %v after %d calls: %d errors, %d hints, %d reset\n", err, c.Calls, c.Errors, c.Hints, c.Resets)

	_, err = retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Err: errors.New("busy")}, Times: 3}}})
	fmt.Println(err)
	// Output:
	// attempt 1: busy; waiting 3s
	// attempt 2: busy; waiting 3s
	// attempt 3: read tcp: read: connection reset by peer; waiting 1s
	// Do: <nil> after 4 calls: 2 errors, 2 hints, 1 reset
	// retrytest: invalid plan: the last step, 0, ends: the last step must last forever (no Times, no For); add Step{} after it to let the calls that follow go through, or drop its Times or For to repeat its fault
}
