//go:build go1.25

package retryhttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flaky serves the statuses in turn (the last one for ever) and records the
// bodies it was sent.
type flaky struct {
	statuses []int
	header   http.Header // added to every non-200 answer
	mu       sync.Mutex
	hits     int
	bodies   []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.hits++
	f.bodies = append(f.bodies, string(body))
	code := f.statuses[min(f.hits, len(f.statuses))-1]
	f.mu.Unlock()
	if code != http.StatusOK {
		for k, v := range f.header {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, http.StatusText(code))
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// serve starts h on loopback and returns a client whose transport retries
// with zero delays, at most five attempts.
func serve(t *testing.T, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	return serveWith(t, h, policy.Constant(0).WithMaxAttempts(5))
}

// serveWith starts h on loopback and returns a client retrying under p; the
// server and its connections are closed when the test ends.
func serveWith(t *testing.T, h http.Handler, p policy.Policy) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(func() {
		base.CloseIdleConnections()
		srv.Close()
	})
	return srv, &http.Client{Transport: build(t, base, p)}
}

// build returns retryhttp.New's Transport, failing t on an error. The
// Transport's own storm guard is turned off, so that tests of other
// behaviour can fail as often as they need to (a guard in the policy is
// still used); guard_test.go tests the guard, and a test's own WithGuard
// option wins.
func build(t testing.TB, base http.RoundTripper, p policy.Policy, opts ...retryhttp.Option) *retryhttp.Transport {
	t.Helper()
	if p.Guard() == nil {
		p = p.WithGuard(admission.Off)
	}
	tr, err := retryhttp.New(base, p, opts...)
	require.NoError(t, err)
	return tr
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestGetRetriedUntilOK(t *testing.T) {
	f := &flaky{statuses: []int{503, 502, 504, 429, 200}}
	srv, client := serve(t, f)
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "OK", body(t, resp))
	require.Equal(t, 5, f.count())
}

func TestFinalRetryableResponseReturnedUntouched(t *testing.T) {
	f := &flaky{statuses: []int{503}}
	srv, client := serve(t, f)
	resp, err := client.Get(srv.URL)
	require.NoError(t, err, "a RoundTripper that got a response reports it")
	require.Equal(t, 503, resp.StatusCode)
	require.Equal(t, "Service Unavailable", body(t, resp), "the final body is unread")
	require.Equal(t, 5, f.count())
}

func TestOtherStatusesNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 404, 500, 501} {
		f := &flaky{statuses: []int{code, 200}}
		srv, client := serve(t, f)
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		require.Equal(t, code, resp.StatusCode)
		body(t, resp)
		require.Equal(t, 1, f.count(), "status %d", code)
	}
}

func TestPostWithoutIdempotencyKeyNotRetried(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	srv, client := serve(t, f)
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("order #1"))
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode)
	body(t, resp)
	require.Equal(t, 1, f.count())
}

func TestPostWithAnEmptyIdempotencyKeyNotRetried(t *testing.T) {
	for _, key := range []string{"", "  "} {
		f := &flaky{statuses: []int{503, 200}}
		srv, client := serve(t, f)
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("order #1"))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.Equal(t, 503, resp.StatusCode, "key %q", key)
		body(t, resp)
		require.Equal(t, 1, f.count(), "key %q", key)
	}
}

func TestPostWithAKeyAmongIdempotencyKeysRetried(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	srv, client := serve(t, f)
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("order #1"))
	require.NoError(t, err)
	req.Header["Idempotency-Key"] = []string{"", "7f3c"}
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	body(t, resp)
	require.Equal(t, 2, f.count())
}

// unrewindablePut returns a PUT whose GetBody always fails, with the error
// it fails with.
func unrewindablePut(t *testing.T, url string) (*http.Request, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader("v2"))
	require.NoError(t, err)
	errGone := errors.New("spool file removed")
	req.GetBody = func() (io.ReadCloser, error) { return nil, errGone }
	return req, errGone
}

// TestBodyThatFailsToRewindKeepsTheResponse: when GetBody fails for a
// retry, the response in hand is the final one and comes back untouched,
// as when any other limit ends the call; the rewind error goes to OnDone.
func TestBodyThatFailsToRewindKeepsTheResponse(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	var done error
	srv, _ := serve(t, f)
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(3),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) { done = e.Err }})))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	req, errGone := unrewindablePut(t, srv.URL)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode)
	require.Equal(t, "Service Unavailable", body(t, resp), "the final response is not drained")
	require.Equal(t, 1, f.count())
	require.ErrorIs(t, done, errGone)
}

// TestRewindFailureAtTheLastAttemptChangesNothing: the body is rewound
// after every attempt whose outcome is one to retry, the last one the policy
// allows too, and a GetBody that fails there leaves the caller the same
// final response.
func TestRewindFailureAtTheLastAttemptChangesNothing(t *testing.T) {
	for attempts := 1; attempts <= 3; attempts++ {
		f := &flaky{statuses: []int{503}}
		srv, _ := serve(t, f)
		tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(attempts).WithGuard(admission.Off))
		require.NoError(t, err)
		var calls atomic.Int32
		req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("v2"))
		require.NoError(t, err)
		req.GetBody = func() (io.ReadCloser, error) {
			if calls.Add(1) >= int32(attempts) {
				return nil, errors.New("spool file removed")
			}
			return io.NopCloser(strings.NewReader("v2")), nil
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err, "attempts %d", attempts)
		require.Equal(t, 503, resp.StatusCode)
		require.Equal(t, "Service Unavailable", body(t, resp))
		require.Equal(t, attempts, f.count())
		require.EqualValues(t, attempts, calls.Load(), "attempts %d: GetBody calls", attempts)
		tr.CloseIdleConnections()
	}
}

// TestRewindFailureIsNotARetry: a retry whose body cannot be rewound is
// not made: no wait starts, the guard is not asked, and OnDone counts the
// attempts sent and sees GetBody's error.
func TestRewindFailureIsNotARetry(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Second} {
		f := &flaky{statuses: []int{503}}
		srv, _ := serve(t, f)
		clk := clocktest.NewCounted()
		guard := policy.NewGuard(1, 1e-6)
		var done retry.DoneEvent
		tr, err := retryhttp.New(nil, policy.Constant(delay).WithMaxAttempts(2).WithClock(clk).WithGuard(guard),
			retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnDone: func(_ context.Context, e retry.DoneEvent) { done = e }})))
		require.NoError(t, err)
		req, errGone := unrewindablePut(t, srv.URL)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err)
		require.Equal(t, 503, resp.StatusCode)
		body(t, resp)
		require.Equal(t, 1, f.count(), "delay %v", delay)
		require.Equal(t, 1, done.Attempts, "delay %v: attempts sent", delay)
		require.ErrorIs(t, done.Err, errGone)
		require.NotErrorIs(t, done.Err, context.Canceled)
		require.Zero(t, clk.Waits(), "delay %v: no wait started", delay)

		require.Equal(t, 1.0, protocol(guard).Tokens(), "delay %v: the guard's one token is still there", delay)
		// And it serves the next request's retry.
		req2, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		got := make(chan int, 1)
		go func() {
			resp, err := (&http.Client{Transport: tr}).Do(req2)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				got <- resp.StatusCode
				return
			}
			got <- 0
		}()
		if delay > 0 {
			require.Equal(t, delay, clk.Step(t), "the second request's one retry")
		}
		require.Equal(t, 503, <-got)
		require.Equal(t, 3, f.count(), "delay %v: the second request was retried once", delay)
		tr.CloseIdleConnections()
	}
}

// TestRewindFailureEndsTheWaitToo: a retry with a real wait ahead whose
// body cannot be rewound ends at once, not after the wait, with the
// response in hand.
func TestRewindFailureEndsTheWaitToo(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	srv, _ := serve(t, f)
	clk := clocktest.NewCounted()
	tr, err := retryhttp.New(nil, policy.Constant(time.Hour).WithMaxAttempts(3).WithClock(clk))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("v2"))
	require.NoError(t, err)
	req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("spool file removed") }
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.Equal(t, 503, r.resp.StatusCode)
		require.Equal(t, "Service Unavailable", body(t, r.resp))
	case <-time.After(10 * time.Second):
		t.Fatal("the call waited out its back-off for a retry it could not send")
	}
	require.Equal(t, 1, f.count())
}

// TestRewindFailureAfterAConnectionError: with no response in hand, the
// call returns the connection error joined with GetBody's.
func TestRewindFailureAfterAConnectionError(t *testing.T) {
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Reset: true}}}})
	require.NoError(t, err)
	srv := httptest.NewServer(in.Handler(&flaky{statuses: []int{200}}))
	defer srv.Close()
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(3))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	req, errGone := unrewindablePut(t, srv.URL)
	_, err = (&http.Client{Transport: tr}).Do(req)
	require.ErrorIs(t, err, errGone)
	require.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection error is kept: %v", err)
	require.Equal(t, 1, strings.Count(err.Error(), "rewinding"), "%v", err)
}

// TestRewoundBodiesAreClosed: every body GetBody hands out is closed,
// the one rewound for an attempt that the policy's limit then never makes
// included.
func TestRewoundBodiesAreClosed(t *testing.T) {
	f := &flaky{statuses: []int{503}}
	srv, _ := serve(t, f)
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(2))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	var rewound []*countedBody
	req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("v2"))
	require.NoError(t, err)
	req.GetBody = func() (io.ReadCloser, error) {
		b := &countedBody{Reader: strings.NewReader("v2")}
		mu.Lock()
		rewound = append(rewound, b)
		mu.Unlock()
		return b, nil
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode)
	body(t, resp)
	require.Equal(t, 2, f.count())
	require.Equal(t, []string{"v2", "v2"}, f.bodies)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, rewound, 2, "one for the retry, one for the attempt the limit never made")
	for i, b := range rewound {
		require.EqualValues(t, 1, b.closes.Load(), "body %d from GetBody closed once", i)
	}
}

func TestPostWithIdempotencyKeyRetriedWithTheSameBody(t *testing.T) {
	f := &flaky{statuses: []int{503, 503, 200}}
	srv, client := serve(t, f)
	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte("order #1")))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "7f3c")
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	body(t, resp)
	require.Equal(t, []string{"order #1", "order #1", "order #1"}, f.bodies)
}

func TestBodyThatCannotBeRewoundIsSentOnce(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	srv, client := serve(t, f)
	req, err := http.NewRequest(http.MethodPut, srv.URL, io.NopCloser(strings.NewReader("stream")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode)
	body(t, resp)
	require.Equal(t, []string{"stream"}, f.bodies, "sent once, whole")
}

func TestConnectionErrorsRetried(t *testing.T) {
	in, err := retrytest.New(retrytest.Plan{Steps: []retrytest.Step{{Fault: retrytest.Fault{Reset: true}, Times: 2}, {}}})
	require.NoError(t, err)
	srv, client := serve(t, in.Handler(&flaky{statuses: []int{200}}))
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "OK", body(t, resp))
	require.Equal(t, 3, in.Counts().Calls)
}

func TestDialRefusedRetriedThenReported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	var ev []retry.RetryEvent
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(3),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { ev = append(ev, e) }})))
	_, err = (&http.Client{Transport: tr}).Get("http://" + addr)
	require.Error(t, err)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.Len(t, ev, 2, "refused twice more after the first")
}

func TestRetryAfter(t *testing.T) {
	now := retrytest.NewClock().Now()
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"3", 3 * time.Second},
		{now.Add(3 * time.Second).UTC().Format(http.TimeFormat), 3 * time.Second},
		{"-1", 10 * time.Second}, // the schedule
		{"abc", 10 * time.Second},
		{now.Add(-time.Hour).UTC().Format(http.TimeFormat), 10 * time.Second},
		{"", 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			clk := clocktest.NewCounted()
			f := &flaky{statuses: []int{503, 200}, header: http.Header{"Retry-After": {tt.header}}}
			if tt.header == "" {
				f.header = nil
			}
			srv, client := serveWith(t, f, policy.Default().WithClock(clk))

			done := make(chan *http.Response, 1)
			go func() {
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Error(err)
				}
				done <- resp
			}()
			require.Equal(t, tt.want, clk.Step(t))
			resp := <-done
			require.Equal(t, 200, resp.StatusCode)
			body(t, resp)
		})
	}
}

func TestCancelMidWait(t *testing.T) {
	clk := clocktest.NewCounted()
	f := &flaky{statuses: []int{503}}
	srv, client := serveWith(t, f, policy.Default().WithClock(clk))

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
			t.Error("a response with a cancelled context")
		}
		done <- err
	}()
	clk.Step(t)
	clk.NextWait(t) // parked in the second, 20s wait
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RoundTrip did not return")
	}
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "status 503 Service Unavailable")
	require.Equal(t, 2, f.count())
}

func TestRetryAfterPastTheDeadlineReturnsTheResponse(t *testing.T) {
	clk := clocktest.NewCounted()
	f := &flaky{statuses: []int{503, 200}, header: http.Header{"Retry-After": {"120"}}}
	srv, client := serveWith(t, f, policy.Default().WithClock(clk))
	ctx, cancel := clk.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode, "the server's answer, at once, rather than a wait past the deadline")
	require.Equal(t, "120", resp.Header.Get("Retry-After"))
	body(t, resp)
	require.Zero(t, clk.Waits())
}

func TestNoConnectionLeak(t *testing.T) {
	var conns atomic.Int32
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, strings.Repeat("busy ", 1000))
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	base := srv.Client().Transport.(*http.Transport)
	client := &http.Client{Transport: build(t, base, policy.Constant(0).WithMaxAttempts(3))}
	for range 1000 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		require.Equal(t, "ok", body(t, resp))
	}
	require.Equal(t, int32(2000), n.Load(), "every request was retried once")
	require.LessOrEqual(t, conns.Load(), int32(2), "keep-alive reuse: connections opened")
	base.CloseIdleConnections()
	srv.Close()
	goleak.VerifyNone(t)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"000", 0, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"3s", 0, false},
		{"abc", 0, false},
		{"", 0, false},
		{"+3", 0, false},
		{"99999999999999999999999", time.Duration(1<<63 - 1), true},
		{"9223372036", 9223372036 * time.Second, true},
		{"9223372037", time.Duration(1<<63 - 1), true},
		{"Sun, 29 Nov 2026 12:00:03 GMT", 3 * time.Second, true},
		{"Sunday, 29-Nov-26 12:00:03 GMT", 3 * time.Second, true},
		{"Sun Nov 29 12:00:03 2026", 3 * time.Second, true},
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, false},
		{"Sun, 29 Nov 2026 12:00:00 GMT", 0, false},
		{"Sun, 32 Nov 2026 12:00:00 GMT", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryhttp.ParseRetryAfter(tt.in, now)
		require.Equal(t, tt.ok, ok, "%q", tt.in)
		require.Equal(t, tt.want, got, "%q", tt.in)
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "0", "-1", "abc", "99999999999999999999999", "Sun, 29 Nov 2026 12:00:03 GMT", "Sun Nov 29 12:00:03 2026", " 7 ", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := retryhttp.ParseRetryAfter(s, now)
		if ok && d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, true: a wait is never negative", s, d)
		}
		if ok && d == 0 && strings.Trim(strings.TrimSpace(s), "0") != "" {
			t.Fatalf("ParseRetryAfter(%q) = 0, true: only a zero delta asks for no wait", s)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, false", s, d)
		}
	})
}

func TestDefaultBoundEndsAnAlways503Call(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	clk := clocktest.NewCounted()
	client := &http.Client{Transport: build(t, nil, policy.Default().WithClock(clk))}

	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL) // no deadline
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second} {
		require.Equal(t, want, clk.Step(t))
	}
	resp := <-done
	require.Equal(t, 503, resp.StatusCode)
	require.Equal(t, "down\n", body(t, resp))
	require.Equal(t, int32(5), hits.Load())
	require.Equal(t, 5-1, clk.Waits())
}

func TestPolicyLimitsAreNotBounded(t *testing.T) {
	f := &flaky{statuses: []int{503}}
	srv, client := serveWith(t, f, policy.Constant(0).WithMaxAttempts(8))
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	body(t, resp)
	require.Equal(t, 8, f.count(), "an attempt limit is the policy's own")

	clk := clocktest.NewCounted()
	f = &flaky{statuses: []int{503}}
	srv, client = serveWith(t, f, policy.Constant(time.Minute).WithMaxElapsed(10*time.Minute).WithClock(clk))
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	for range 10 {
		require.Equal(t, time.Minute, clk.Step(t))
	}
	resp = <-done
	body(t, resp)
	require.Equal(t, 11, f.count(), "so is a time limit")
}

func TestNewRefusesAnUnusablePolicy(t *testing.T) {
	for _, p := range []policy.Policy{
		policy.Constant(-1),
		policy.Exponential(time.Second).WithCap(time.Millisecond),
		policy.Default().WithAttemptTimeout(-time.Second),
	} {
		tr, err := retryhttp.New(nil, p)
		require.ErrorIs(t, err, policy.ErrInvalid, "%v", p)
		require.ErrorContains(t, err, "retryhttp: ")
		require.Nil(t, tr)
	}
}

func TestZeroTransport(t *testing.T) {
	f := &flaky{statuses: []int{200}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	resp, err := (&http.Client{Transport: &retryhttp.Transport{}}).Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "OK", body(t, resp))
}

func TestHooksSeeEveryRequest(t *testing.T) {
	f := &flaky{statuses: []int{200}}
	var retries, dones atomic.Int32
	srv := httptest.NewServer(f)
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: build(t, base, policy.Constant(0).WithMaxAttempts(3), retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{
		OnRetry: func(context.Context, retry.RetryEvent) { retries.Add(1) },
		OnDone:  func(context.Context, retry.DoneEvent) { dones.Add(1) },
	})))}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	body(t, resp)
	require.Equal(t, int32(1), dones.Load(), "a first-try success ends a call too")

	f.statuses = []int{503, 503, 200}
	f.hits = 0
	resp, err = client.Get(srv.URL)
	require.NoError(t, err)
	body(t, resp)
	require.Equal(t, int32(2), retries.Load())
	require.Equal(t, int32(2), dones.Load())
}

func TestWithRetryIfReplacesTheClassification(t *testing.T) {
	f := &flaky{statuses: []int{500, 500, 200}}
	var seen atomic.Int32
	srv := httptest.NewServer(f)
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(5), retryhttp.WithClassifier(func(req *http.Request, resp *http.Response, err error) bool {
		seen.Add(1)
		return err == nil && resp.StatusCode == http.StatusInternalServerError
	}))
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, "OK", body(t, resp))
	require.Equal(t, 3, f.count(), "500 retried, by the caller's rule")
	require.Equal(t, int32(3), seen.Load())

	tr = build(t, base, policy.Constant(0).WithMaxAttempts(5), retryhttp.WithClassifier(nil))
	f.statuses, f.hits = []int{500, 200}, 0
	resp, err = (&http.Client{Transport: tr}).Get(srv.URL)
	require.NoError(t, err)
	require.Equal(t, 500, resp.StatusCode, "nil keeps the default, which does not retry 500")
	body(t, resp)
}

func TestCancelledWithAResponseInHand(t *testing.T) {
	f := &flaky{statuses: []int{503, 200}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The caller gives up just as the 503 arrives: the loop stops before any
	// wait, with the response in hand, which is released, not returned.
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(5), retryhttp.WithClassifier(func(req *http.Request, resp *http.Response, err error) bool {
		cancel()
		return retryhttp.DefaultRetryable(req.WithContext(context.Background()), resp, err)
	}))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.Nil(t, resp)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "retryhttp: GET "+srv.URL)
	require.ErrorContains(t, err, "status 503 Service Unavailable")
	require.Equal(t, 1, f.count())
}

func TestCloseIdleConnectionsReachesTheBase(t *testing.T) {
	srv, conns := countingServer(t, &flaky{statuses: []int{200}})
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: build(t, base, policy.Constant(0).WithMaxAttempts(3))}
	for range 2 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		body(t, resp)
	}
	require.Equal(t, int32(1), conns.Load())
	client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	body(t, resp)
	require.Equal(t, int32(2), conns.Load(), "the idle connection was closed")
}

func TestUpgradedResponseKeepsItsWriteUnderAnAttemptTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		buf := make([]byte, 4)
		if _, err := io.ReadFull(brw, buf); err == nil {
			_, _ = conn.Write(buf)
		}
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	clk := clocktest.NewCounted()
	tr := build(t, base, policy.Constant(0).WithAttemptTimeout(5*time.Second).WithClock(clk))
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	rw, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "the upgraded connection can still be written to")
	clk.Add(time.Hour) // long past the attempt timeout
	_, err = io.WriteString(rw, "ping")
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = io.ReadFull(rw, buf)
	require.NoError(t, err)
	require.Equal(t, "ping", string(buf))
	require.NoError(t, rw.Close())
}

func TestNewSkipsANilOption(t *testing.T) {
	tr, err := retryhttp.New(nil, policy.Default(), nil, retryhttp.WithIdempotencyKeys(), nil)
	require.NoError(t, err)
	require.NotNil(t, tr)
}
