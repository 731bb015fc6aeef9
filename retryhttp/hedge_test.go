//go:build go1.25

package retryhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// scripted is a RoundTripper whose i-th request (from 1) is answered by
// answer(i, req); every body it hands out reports its Close on closed.
type scripted struct {
	n      atomic.Int32
	answer func(i int, req *http.Request) (*http.Response, error)
	closed chan string
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.answer(int(s.n.Add(1)), req)
}

func (s *scripted) respond(code int, body string) *http.Response {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: &trackedBody{Reader: strings.NewReader(body), name: body, closed: s.closed}}
}

type trackedBody struct {
	io.Reader
	name   string
	closed chan string
	done   atomic.Bool
}

func (b *trackedBody) Close() error {
	if !b.done.Swap(true) {
		b.closed <- b.name
	}
	return nil
}

func hedgingClient(t *testing.T, rt http.RoundTripper, clk policy.Clock, attempts int) *http.Client {
	t.Helper()
	tr, err := retryhttp.New(rt, policy.Constant(time.Second).WithMaxAttempts(attempts).WithClock(clk).
		WithHedging(policy.Hedging{Delay: time.Second}))
	require.NoError(t, err)
	return &http.Client{Transport: tr}
}

func TestHedgedGetWinsAndTheLosersResponseIsReleased(t *testing.T) {
	s := &scripted{closed: make(chan string, 4)}
	cancelled, entered := make(chan struct{}), make(chan struct{})
	s.answer = func(i int, req *http.Request) (*http.Response, error) {
		if i == 1 {
			close(entered)
			<-req.Context().Done() // the slow attempt, until the call gives up on it;
			close(cancelled)
			return s.respond(200, "slow"), nil // its answer arrives just then
		}
		return s.respond(200, "fast"), nil
	}
	clk := clocktest.NewCounted()
	client := hedgingClient(t, s, clk, 3)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get("http://example.invalid/")
		require.NoError(t, err)
		done <- resp
	}()
	<-entered
	require.Equal(t, time.Second, clk.Step(t), "the hedge delay")
	resp := <-done
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "fast", string(body))
	<-cancelled
	require.Equal(t, "slow", <-s.closed, "the losing response is drained and closed")
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "fast", <-s.closed)
	require.EqualValues(t, 2, s.n.Load())
}

func TestHedgedFinalResponseUntouchedAndTheOtherReleased(t *testing.T) {
	s := &scripted{closed: make(chan string, 4)}
	first := make(chan struct{})
	s.answer = func(i int, req *http.Request) (*http.Response, error) {
		if i == 1 {
			<-first
			return s.respond(503, "first"), nil
		}
		close(first)
		return s.respond(503, "second"), nil
	}
	clk := clocktest.NewCounted()
	client := hedgingClient(t, s, clk, 2) // the hedge is the last attempt
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get("http://example.invalid/")
		require.NoError(t, err, "the final response, with a nil error")
		done <- resp
	}()
	clk.Step(t)
	resp := <-done
	require.Equal(t, 503, resp.StatusCode)
	released := <-s.closed
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NotEqual(t, released, string(body), "the response returned is not the one released")
	require.Contains(t, []string{"first", "second"}, string(body))
	require.NoError(t, resp.Body.Close())
}

func TestHedgingOnlyIdempotentRewindableRequests(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  func() *http.Request
	}{
		{"POST", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://example.invalid/", strings.NewReader("x"))
			return r
		}},
		{"GET with a body that cannot be rewound", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "http://example.invalid/", io.NopCloser(strings.NewReader("x")))
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{closed: make(chan string, 4)}
			s.answer = func(int, *http.Request) (*http.Response, error) { return s.respond(200, "ok"), nil }
			clk := clocktest.NewCounted()
			resp, err := hedgingClient(t, s, clk, 3).Do(tt.req())
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Zero(t, clk.Waits(), "no hedge timer")
			require.EqualValues(t, 1, s.n.Load())
		})
	}
}

func TestHedgedPutSendsItsBodyWithEveryAttempt(t *testing.T) {
	s := &scripted{closed: make(chan string, 4)}
	var bodies [2]atomic.Value
	s.answer = func(i int, req *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(req.Body)
		bodies[i-1].Store(string(b))
		if i == 1 {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return s.respond(200, "stored"), nil
	}
	clk := clocktest.NewCounted()
	client := hedgingClient(t, s, clk, 3)
	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, "http://example.invalid/", strings.NewReader("payload"))
		resp, err := client.Do(req)
		require.NoError(t, err)
		done <- resp
	}()
	clk.Step(t)
	resp := <-done
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "payload", bodies[0].Load())
	require.Equal(t, "payload", bodies[1].Load())
}

func TestInvalidHedgingRefused(t *testing.T) {
	_, err := retryhttp.New(nil, policy.Default().WithHedging(policy.Hedging{Delay: -1}))
	require.ErrorIs(t, err, policy.ErrInvalid)
}

func TestHedgedHooksSeeTheHedge(t *testing.T) {
	s := &scripted{closed: make(chan string, 4)}
	entered := make(chan struct{})
	s.answer = func(i int, req *http.Request) (*http.Response, error) {
		if i == 1 {
			close(entered)
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		return s.respond(200, "ok"), nil
	}
	clk := clocktest.NewCounted()
	var ev atomic.Value
	tr, err := retryhttp.New(s, policy.Constant(time.Second).WithMaxAttempts(3).WithClock(clk).
		WithHedging(policy.Hedging{Delay: time.Second}),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) { ev.Store(e) }})))
	require.NoError(t, err)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get("http://example.invalid/")
		require.NoError(t, err)
		done <- resp
	}()
	<-entered // the first attempt is the first request: the hedge is sent only after the step
	clk.Step(t)
	resp := <-done
	require.NoError(t, resp.Body.Close())
	e := ev.Load().(retry.DoneEvent)
	require.Equal(t, 1, e.Hedges)
	require.Equal(t, 2, e.Won)
}

// countedBody counts every Close, so that a second one shows.
type countedBody struct {
	io.Reader
	closes atomic.Int32
}

func (b *countedBody) Close() error { b.closes.Add(1); return nil }

func TestHedgedRetryableResponsesAreClosedOnce(t *testing.T) {
	// Two rounds of two attempts, every one answered 503: the first of a
	// round answers once its hedge has. Each response but the final one is
	// released exactly once, though it is both held for the wait and a
	// loser of its round.
	var mu sync.Mutex
	var bodies []*countedBody
	hedged := make(chan struct{}, 4)
	var n atomic.Int32
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		i := n.Add(1)
		if i%2 == 1 {
			<-hedged // the first of its round waits for its hedge to answer
		} else {
			defer func() { hedged <- struct{}{} }()
		}
		b := &countedBody{Reader: strings.NewReader("busy")}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Header: http.Header{}, Body: b}, nil
	})
	clk := clocktest.NewCounted()
	client := hedgingClient(t, rt, clk, 4)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get("http://example.invalid/")
		require.NoError(t, err)
		done <- resp
	}()
	require.Equal(t, time.Second, clk.Step(t), "round 1: the hedge delay")
	require.Equal(t, time.Second, clk.Step(t), "the back-off")
	require.Equal(t, time.Second, clk.Step(t), "round 2: the hedge delay")
	resp := <-done
	require.Equal(t, 503, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies {
			if b.closes.Load() == 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "every response is closed")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 4)
	for i, b := range bodies {
		require.EqualValues(t, 1, b.closes.Load(), "response %d closed once", i+1)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Hedged requests made on one long-lived context give their memory back
// once their bodies are closed, not when the context ends: 20,000 of them
// once held about 600 B each (12 MB) until then.
func TestHedgedRequestsOnALongLivedContextHoldNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("memory in bytes is only meaningful without -race")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	tr, err := retryhttp.New(srv.Client().Transport, policy.Constant(time.Millisecond).WithMaxAttempts(3).
		WithHedging(policy.Hedging{Delay: time.Hour}))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background()) // a worker's context: ends only at shutdown
	defer cancel()
	get := func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	for range 1000 { // warm the connection pool and the runtime's caches
		get()
	}
	before := heapAfterGC()
	const requests = 20_000
	for range requests {
		get()
	}
	grown := heapAfterGC() - before
	t.Logf("%d hedged requests on one context: heap %+d B (%.1f B a request)", requests, grown, float64(grown)/requests)
	require.Less(t, grown, int64(requests*50), "memory held per request after its body is closed")
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A hedged request that the guard stops still returns the final response
// with its body, as an unhedged one does: the body is kept in memory
// through the wait rather than released.
func TestHedgedFinalResponseKeepsItsBodyWhenTheGuardStopsTheCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "maintenance page")
	}))
	defer srv.Close()
	for _, hedging := range []policy.Hedging{{}, {Delay: 500 * time.Millisecond}} {
		g := policy.NewGuard(1, 1e-6)
		protocol(g).Record(true, admit.Failed) // no token left
		protocol(g).Allow(time.Now())          // and this second's probe taken
		protocol(g).Start()                    // and another call in flight
		p := policy.Constant(20 * time.Millisecond).WithMaxAttempts(2).WithGuard(g).WithHedging(hedging)
		tr, err := retryhttp.New(srv.Client().Transport, p)
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		require.NoError(t, err)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.ErrorIs(t, retryhttp.Err(resp), retry.ErrThrottled, "hedging %+v", hedging)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err, "hedging %+v", hedging)
		require.Equal(t, "maintenance page", string(b))
		require.NoError(t, resp.Body.Close())
		protocol(g).Done()
	}
}

// A hedged request answered with a failure that is not retried (a 500) is
// a failure for the guard and no sample for the latency estimate, as
// without hedging; the response still comes back as the result.
func TestHedgedUnretriedFailureIsNoSuccess(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "oops")
	}))
	defer srv.Close()
	for _, hedging := range []policy.Hedging{{}, {Delay: 500 * time.Millisecond}, {Quantile: 0.5}} {
		g := policy.NewGuard(10, 1)
		for range 4 {
			protocol(g).Record(true, admit.Failed)
		}
		require.Equal(t, 6.0, protocol(g).Tokens())
		p := policy.Constant(time.Millisecond).WithMaxAttempts(3).WithGuard(g).WithHedging(hedging)
		tr, err := retryhttp.New(srv.Client().Transport, p)
		require.NoError(t, err)
		c := &http.Client{Transport: tr}
		for range 3 {
			resp, err := c.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			require.Equal(t, "oops", body(t, resp))
		}
		require.Equal(t, 4.5, protocol(g).Tokens(), "three first tries that failed fast take half the ratio each; hedging %+v", hedging)
		_, ready := protocol(g).Latency(0.5)
		require.False(t, ready, "no attempt succeeded: the estimate has no sample; hedging %+v", hedging)
	}
}

// A hedged request reads Retry-Pushback where an unhedged one does: on a
// response the Transport would retry, and nowhere else. A 200 or a 500
// that carries the header comes back as any 200 or 500 does, and the guard
// hears of it alike, so a healthy server that sets the header is never
// taken for an overloaded one.
func TestHedgedPushbackOnlyOnAResponseToRetry(t *testing.T) {
	const requests = 20 // more than the 16 overloaded attempts in a row that stall a guard
	for _, tt := range []struct {
		status   int
		pushback bool
	}{
		{http.StatusOK, false},
		{http.StatusInternalServerError, false}, // a status the default classification does not retry
		{http.StatusServiceUnavailable, true},
	} {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Header().Set("Retry-Pushback", "never")
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			tokens := map[string]float64{}
			for name, hedging := range map[string]policy.Hedging{"plain": {}, "hedged": {Delay: time.Hour}} {
				n.Store(0)
				g := policy.NewGuard(10, 1)
				for range 5 {
					protocol(g).Record(true, admit.Failed) // room for the successes' ratio
				}
				tr, err := retryhttp.New(srv.Client().Transport, policy.Constant(0).WithMaxAttempts(3).WithGuard(g).WithHedging(hedging))
				require.NoError(t, err)
				for range requests {
					resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
					require.NoError(t, err, name)
					require.NoError(t, resp.Body.Close())
					require.Equal(t, tt.status, resp.StatusCode, name)
					if tt.pushback {
						require.ErrorIs(t, retryhttp.Err(resp), retry.ErrPushback, name)
					} else {
						require.NoError(t, retryhttp.Err(resp), name)
					}
				}
				require.EqualValues(t, requests, n.Load(), "%s: one attempt a request", name)
				require.Equal(t, tt.pushback, protocol(g).Stalled(), "%s: the guard takes the header for overload only where it is read", name)
				tokens[name] = protocol(g).Tokens()
			}
			require.Equal(t, tokens["plain"], tokens["hedged"], "the guard hears the same of both")
		})
	}
}
