//go:build go1.25

package retryhttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// busyPage is a 503 page with a body, as real servers send.
var busyPage = strings.Repeat("the service is busy, come back later\n", 100)

// countingServer starts h on loopback and counts the connections opened to
// it; the server is closed when the test ends.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// firstBusy answers 503 with a Retry-After and a body to the first request
// for each URL, and 200 to the next ones; /fast is never busy.
type firstBusy struct {
	retryAfter string
	mu         sync.Mutex
	seen       map[string]int
}

func (f *firstBusy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	f.seen[r.URL.String()]++
	n := f.seen[r.URL.String()]
	f.mu.Unlock()
	if n == 1 && r.URL.Path != "/fast" {
		w.Header().Set("Retry-After", f.retryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, busyPage)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func TestParkedRequestDoesNotBlockTheHost(t *testing.T) {
	srv, _ := countingServer(t, &firstBusy{retryAfter: "60"})
	base := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(base.CloseIdleConnections)
	clk := retrytest.NewClock()
	client := &http.Client{Transport: build(t, base, policy.Default().WithMaxAttempts(3).WithClock(clk))}

	parked := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL + "/slow")
		if err != nil {
			t.Error(err)
		}
		parked <- resp
	}()
	require.Equal(t, 60*time.Second, clk.NextWait(t), "parked behind Retry-After: 60")

	// The only connection the host allows is free again: a second request
	// goes through while the first one waits.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/fast", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err, "the parked request holds no connection")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "ok", body(t, resp))

	clk.Add(60 * time.Second)
	resp = <-parked
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "ok", body(t, resp))
}

func TestParkedRequestsShareOneConnection(t *testing.T) {
	srv, conns := countingServer(t, &firstBusy{retryAfter: "60"})
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(base.CloseIdleConnections)
	clk := retrytest.NewClock()
	client := &http.Client{Transport: build(t, base, policy.Default().WithMaxAttempts(3).WithClock(clk))}

	const n = 10
	results := make(chan *http.Response, n)
	for i := range n {
		go func() {
			resp, err := client.Get(fmt.Sprintf("%s/%d", srv.URL, i))
			if err != nil {
				t.Error(err)
			}
			results <- resp
		}()
		require.Equal(t, 60*time.Second, clk.NextWait(t), "request %d parked", i)
	}
	require.Equal(t, int32(1), conns.Load(), "ten parked requests, one after another, on one connection")

	clk.Add(60 * time.Second)
	for range n {
		resp := <-results
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "ok", body(t, resp))
	}
}

// timeoutClock is a retrytest.Clock that also tells the test, on timeouts,
// each time the code under test starts a timeout through WithTimeout, and
// counts the waits started.
type timeoutClock struct {
	*clocktest.Counted
	timeouts chan time.Duration
}

func newTimeoutClock() *timeoutClock {
	return &timeoutClock{Counted: clocktest.NewCounted(), timeouts: make(chan time.Duration, 100)}
}

func (c *timeoutClock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := c.Counted.WithTimeout(ctx, d)
	c.timeouts <- d
	return ctx, cancel
}

func (c *timeoutClock) nextTimeout(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.timeouts:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no timeout started")
		return 0
	}
}

func TestStalledRetriedBodyDoesNotHoldTheCall(t *testing.T) {
	var hits atomic.Int32
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "the first words of a page that never ends")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // stalls until the client drops the connection
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(base.CloseIdleConnections)
	// The drain's bound is real time, shortened for the test; the policy's
	// mock clock does not hold it up.
	defer retryhttp.SetDrainTimeout(50 * time.Millisecond)()
	clk := retrytest.NewClock()
	client := &http.Client{Transport: build(t, base, policy.Constant(time.Second).WithMaxAttempts(3).WithClock(clk))}

	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	require.Equal(t, time.Second, clk.Step(t), "the back-off follows the drain, cut after its bound")
	resp := <-done
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "ok", body(t, resp))
	require.Equal(t, int32(2), conns.Load(), "the stalled connection was dropped")
}

// hugeBody is longer than the Transport drains: a final response that was
// drained would have lost it.
var hugeBody = strings.Repeat("x", 200<<10)

func TestFinalResponseUntouchedWhateverEndsTheCall(t *testing.T) {
	busy := func(retryAfter string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, hugeBody)
		})
	}
	tests := []struct {
		name   string
		p      policy.Policy
		ctx    func(*retrytest.Clock) (context.Context, context.CancelFunc)
		waits  []time.Duration
		header string
	}{
		{name: "attempts", p: policy.Constant(time.Second).WithMaxAttempts(3), waits: []time.Duration{time.Second, time.Second}},
		{name: "time limit", p: policy.Constant(10 * time.Second).WithMaxElapsed(15 * time.Second), waits: []time.Duration{10 * time.Second}},
		{name: "deadline", p: policy.Constant(45 * time.Second), waits: []time.Duration{45 * time.Second},
			ctx: func(clk *retrytest.Clock) (context.Context, context.CancelFunc) {
				return clk.WithTimeout(context.Background(), time.Minute)
			}},
		{name: "default bound", p: policy.Constant(time.Second), waits: []time.Duration{time.Second, time.Second, time.Second, time.Second}},
		{name: "hint ceiling", p: policy.Constant(time.Second), header: "600"},
		{name: "hint past the time limit", p: policy.Constant(time.Second).WithMaxElapsed(time.Minute), header: "120"},
		{name: "hint past the deadline", p: policy.Constant(time.Second), header: "120",
			ctx: func(clk *retrytest.Clock) (context.Context, context.CancelFunc) {
				return clk.WithTimeout(context.Background(), time.Minute)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := countingServer(t, busy(tt.header))
			base := srv.Client().Transport.(*http.Transport)
			t.Cleanup(base.CloseIdleConnections)
			clk := clocktest.NewCounted()
			client := &http.Client{Transport: build(t, base, tt.p.WithClock(clk))}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx(clk.Clock)
			}
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			done := make(chan *http.Response, 1)
			go func() {
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
				}
				done <- resp
			}()
			for _, want := range tt.waits {
				require.Equal(t, want, clk.Step(t))
			}
			resp := <-done
			require.Equal(t, 503, resp.StatusCode)
			require.Equal(t, hugeBody, body(t, resp), "the final body, whole")
			require.Equal(t, len(tt.waits), clk.Waits())
		})
	}
}

func TestLongRetriedBodyIsClosedUnread(t *testing.T) {
	var hits atomic.Int32
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, hugeBody) // more than the Transport drains
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: build(t, base, policy.Constant(0).WithMaxAttempts(3))}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "ok", body(t, resp))
	require.Equal(t, int32(2), conns.Load(), "the long body's connection was dropped, not read to its end")
}

func TestRetryAfterZeroRetriesAtOnce(t *testing.T) {
	clk := clocktest.NewCounted()
	f := &flaky{statuses: []int{503, 429, 200}, header: http.Header{"Retry-After": {"0"}}}
	srv, client := serveWith(t, f, policy.Default().WithClock(clk))
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "OK", body(t, resp))
	require.Equal(t, 3, f.count())
	require.Zero(t, clk.Waits(), "no wait, not the schedule's 10s")
}

// spentGuard returns a guard with no token left, its probe spent at now,
// and another call in flight until the test ends.
func spentGuard(t *testing.T, now time.Time) *policy.Guard {
	g := policy.NewGuard(1, 1e-6)
	protocol(g).Allow(now)
	protocol(g).Record(true, admit.Failed)
	protocol(g).Allow(now)
	busy(t, g)
	return g
}

// busy tells g of another call in flight until the test ends: a call alone
// in flight keeps its retries whatever the tokens, and the tests that use
// it are about the tokens.
func busy(t *testing.T, g *policy.Guard) {
	protocol(g).Start()
	t.Cleanup(protocol(g).Done)
}
