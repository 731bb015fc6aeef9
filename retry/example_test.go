package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

func ExampleDo() {
	// The kubelet back-off, 10s doubling. The example runs it on a virtual
	// clock whose waits end at once; real code leaves the clock out.
	clk := newVirtualClock()
	p := policy.Default().WithMaxAttempts(5).WithClock(clk)

	attempt := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		attempt++
		if attempt < 3 {
			fmt.Printf("attempt %d at %v: connection refused\n", attempt, clk.elapsed())
			return errors.New("connection refused")
		}
		fmt.Printf("attempt %d at %v: ok\n", attempt, clk.elapsed())
		return nil
	}, p)
	fmt.Println("Do:", err)
	// Output:
	// attempt 1 at 0s: connection refused
	// attempt 2 at 10s: connection refused
	// attempt 3 at 30s: ok
	// Do: <nil>
}

func ExampleDo_exhausted() {
	p := policy.Default().WithMaxAttempts(3).WithClock(newVirtualClock())

	err := retry.Do(context.Background(), func(ctx context.Context) error {
		return io.ErrUnexpectedEOF
	}, p)
	fmt.Println(err)
	fmt.Println("exhausted:", errors.Is(err, retry.ErrExhausted))
	fmt.Println("last error kept:", errors.Is(err, io.ErrUnexpectedEOF))
	var rerr *retry.Error
	if errors.As(err, &rerr) {
		fmt.Println("attempts:", rerr.Attempts)
	}
	// Output:
	// retry: gave up after 3 attempts: unexpected EOF
	// exhausted: true
	// last error kept: true
	// attempts: 3
}

func ExampleDo_cancelled() {
	// The context ends the call during its back-off: Do returns at once, and
	// its error matches both the context's error and the last attempt's.
	ctx, cancel := context.WithCancel(context.Background())
	err := retry.Do(ctx, func(ctx context.Context) error {
		cancel() // in real code: a shutdown, while the next wait would be 10s
		return io.ErrUnexpectedEOF
	}, policy.Default())
	fmt.Println("canceled:", errors.Is(err, context.Canceled))
	fmt.Println("last error kept:", errors.Is(err, io.ErrUnexpectedEOF))
	// Output:
	// canceled: true
	// last error kept: true
}

type user struct{ Name string }

func ExampleDoValue() {
	calls := 0
	u, err := retry.DoValue(context.Background(), func(ctx context.Context) (user, error) {
		calls++
		if calls == 1 {
			return user{}, errors.New("503 service unavailable")
		}
		return user{Name: "ada"}, nil
	}, policy.Constant(0).WithMaxAttempts(3))
	fmt.Println(u.Name, err, "after", calls, "attempts")
	// Output: ada <nil> after 2 attempts
}

type job struct {
	ID    string
	State string
}

// errPending is the operation's own error for a result worth retrying.
var errPending = errors.New("job still pending")

// Retry on the result, not only on an error: the operation returns an error
// of its own with the value. DoValue returns the last attempt's value with
// the call's error, so the value is there when the call gives up too.
func ExampleDoValue_result() {
	states := []string{"pending", "pending", "done"}
	poll := func(attempts int) {
		calls := 0
		j, err := retry.DoValue(context.Background(), func(ctx context.Context) (job, error) {
			j := job{ID: "j-42", State: states[calls]}
			calls++
			if j.State == "pending" {
				return j, errPending
			}
			return j, nil
		}, policy.Constant(time.Second).WithMaxAttempts(attempts).WithClock(newVirtualClock()))
		fmt.Printf("%d attempts: %s %s, err: %v, pending: %v\n", attempts, j.ID, j.State, err, errors.Is(err, errPending))
	}
	poll(5)
	poll(2)
	// Output:
	// 5 attempts: j-42 done, err: <nil>, pending: false
	// 2 attempts: j-42 pending, err: retry: gave up after 2 attempts: job still pending, pending: true
}

func ExamplePermanent() {
	errNotFound := errors.New("404 not found")
	calls := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		calls++
		return retry.Permanent(errNotFound) // no use asking again
	}, policy.Default())
	fmt.Println(err, "after", calls, "attempt; the same error:", err == errNotFound)
	// Output: 404 not found after 1 attempt; the same error: true
}

func ExampleAfter() {
	// A server said "come back in 45s" (an HTTP Retry-After, a gRPC
	// pushback): the hint replaces the schedule's 10s for that wait.
	clk := newVirtualClock()
	attempt := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		attempt++
		fmt.Printf("attempt %d at %v\n", attempt, clk.elapsed())
		if attempt == 1 {
			return retry.After(45*time.Second, errors.New("429 too many requests"))
		}
		return nil
	}, policy.Default().WithClock(clk))
	fmt.Println("Do:", err)
	// Output:
	// attempt 1 at 0s
	// attempt 2 at 45s
	// Do: <nil>
}

func ExampleAfter_tooLong() {
	// A hint above the policy's hint ceiling (5 minutes by default) ends the
	// call at once rather than sleeping for an hour.
	errUnavailable := errors.New("503 service unavailable")
	calls := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		calls++
		return retry.After(time.Hour, errUnavailable)
	}, policy.Default())
	fmt.Println("attempts:", calls)
	fmt.Println("hint too long:", errors.Is(err, retry.ErrHintTooLong))
	fmt.Println("last error kept:", errors.Is(err, errUnavailable))
	// Output:
	// attempts: 1
	// hint too long: true
	// last error kept: true
}

func ExampleLoop() {
	// A consumer that reconnects for ever: run 1 and 2 fail, run 3 serves
	// until its stream ends, run 4 sees the shutdown. After a run that
	// succeeded the back-off starts over at 10s.
	clk := newVirtualClock()
	ctx, shutdown := context.WithCancel(context.Background())
	run := 0
	err := retry.Loop(ctx, func(ctx context.Context) error {
		run++
		fmt.Printf("run %d at %v\n", run, clk.elapsed())
		switch run {
		case 1, 2:
			return errors.New("connection refused")
		case 3:
			return nil
		default:
			shutdown()
			return ctx.Err()
		}
	}, policy.Default().WithClock(clk))
	fmt.Println("Loop ended by the shutdown:", errors.Is(err, context.Canceled))
	// Output:
	// run 1 at 0s
	// run 2 at 10s
	// run 3 at 30s
	// run 4 at 40s
	// Loop ended by the shutdown: true
}

func ExampleGo() {
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(2)
	items := []string{"a", "b", "c", "d"}
	var mu sync.Mutex
	attempts := map[string]int{}
	for _, item := range items {
		retry.Go(ctx, g, func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[item]++
			if attempts[item] == 1 {
				return errors.New("timeout") // every item fails once
			}
			return nil
		}, policy.Constant(0).WithMaxAttempts(3))
	}
	fmt.Println("Wait:", g.Wait())
	for _, item := range items {
		fmt.Print(item, ":", attempts[item], " ")
	}
	fmt.Println()
	// Output:
	// Wait: <nil>
	// a:2 b:2 c:2 d:2
}

func ExampleWithHooks() {
	clk := newVirtualClock()
	hooks := &retry.Hooks{
		OnRetry: func(ctx context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d failed (%v), waiting %v\n", e.Attempt, e.Err, e.Delay)
		},
		OnDone: func(ctx context.Context, e retry.DoneEvent) {
			fmt.Printf("done after %d attempts in %v: %v\n", e.Attempts, e.Elapsed, e.Err)
		},
	}
	// Build the option once and pass it to any number of calls.
	observe := retry.WithHooks(hooks)

	err := retry.Do(context.Background(), func(ctx context.Context) error {
		return errors.New("connection refused")
	}, policy.Default().WithMaxAttempts(3).WithClock(clk), observe)
	fmt.Println("exhausted:", errors.Is(err, retry.ErrExhausted))
	// Output:
	// attempt 1 failed (connection refused), waiting 10s
	// attempt 2 failed (connection refused), waiting 20s
	// done after 3 attempts in 30s: retry: gave up after 3 attempts in 30s: connection refused
	// exhausted: true
}

func ExampleSlogHooks() {
	// A text handler without the time attribute, so that the output is
	// the same on every run.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	logs := retry.WithHooks(retry.SlogHooks(logger, slog.LevelWarn))

	attempt := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		if attempt++; attempt < 3 {
			return errors.New("connection refused")
		}
		return nil
	}, policy.Default().WithClock(newVirtualClock()), logs)
	fmt.Println("Do:", err)
	// Output:
	// level=WARN msg="retry: waiting" attempt=1 delay=10s elapsed=0s error="connection refused"
	// level=WARN msg="retry: waiting" attempt=2 delay=20s elapsed=10s error="connection refused"
	// level=INFO msg="retry: succeeded" attempts=3 elapsed=30s
	// Do: <nil>
}

// Each attempt gets its own deadline: an attempt that hangs is cut off and
// retried while the call's own context is still live. The mock clock of
// package retrytest runs the attempt's deadline on virtual time.
func Example_attemptTimeout() {
	clk := retrytest.NewClock()
	p := policy.Constant(0).WithMaxAttempts(3).WithAttemptTimeout(2 * time.Second).WithClock(clk)

	attempt := 0
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		attempt++
		if attempt == 1 {
			clk.Add(5 * time.Second) // the server hangs for 5s
			<-ctx.Done()
			fmt.Println("attempt 1:", ctx.Err())
			return ctx.Err()
		}
		fmt.Println("attempt", attempt, "answered")
		return nil
	}, p)
	fmt.Println("Do:", err)
	// Output:
	// attempt 1: context deadline exceeded
	// attempt 2 answered
	// Do: <nil>
}

// virtualClock is a policy.Clock on which every wait ends at once, its time
// moved on by the wait. It lets an example show real delays without waiting
// for them. It serves one call at a time.
type virtualClock struct {
	start, now time.Time
}

func newVirtualClock() *virtualClock {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &virtualClock{start: t, now: t}
}

func (c *virtualClock) Now() time.Time { return c.now }

func (c *virtualClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// elapsed is the virtual time since the clock was made.
func (c *virtualClock) elapsed() time.Duration { return c.now.Sub(c.start) }
