//go:build go1.25

package retryhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
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

// hopPolicy is the policy of every hop in these tests: 4 attempts, no wait.
var hopPolicy = policy.Constant(0).WithMaxAttempts(4)

// leaf is a loopback server that answers every request with status and
// counts the requests, and the previous attempts they said came before.
type leaf struct {
	status   atomic.Int32
	requests atomic.Int32
	previous atomic.Value // the last Retry-Previous-Attempts seen
}

func startLeaf(t *testing.T, status int) (*leaf, *httptest.Server) {
	t.Helper()
	l := &leaf{}
	l.status.Store(int32(status))
	l.previous.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		l.previous.Store(r.Header.Get("Retry-Previous-Attempts"))
		w.WriteHeader(int(l.status.Load()))
	}))
	t.Cleanup(srv.Close)
	return l, srv
}

// client returns an http.Client whose Transport retries under hopPolicy,
// with a guard of the given capacity.
func client(t *testing.T, guard *policy.Guard) *http.Client {
	t.Helper()
	tr, err := retryhttp.New(nil, hopPolicy.WithGuard(guard))
	require.NoError(t, err)
	return &http.Client{Transport: tr}
}

// learnt returns a guard whose last 16 attempts showed overload: a guard
// that has seen the dependency in trouble, which an overloaded call needs
// before it asks its callers not to retry.
func learnt() *policy.Guard {
	g := policy.NewGuard(50, 1)
	for !protocol(g).Stalled() {
		protocol(g).Record(false, admit.Overloaded)
	}
	return g
}

// byHost sends each request through the RoundTripper of its host.
type byHost map[string]http.RoundTripper

func (b byHost) RoundTrip(r *http.Request) (*http.Response, error) { return b[r.URL.Host].RoundTrip(r) }

// fetch makes a GET to url on ctx and returns the response, its body read.
func fetch(t *testing.T, ctx context.Context, c *http.Client, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// startMid starts a loopback server behind retryhttp.Handler whose handler
// calls each of urls in turn through down, and answers 503 when any fails,
// or 200 with fallback when fallback is set.
func startMid(t *testing.T, down *http.Client, fallback bool, urls ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(retryhttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		failed := false
		for _, u := range urls {
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, u, nil)
			resp, err := down.Do(req)
			if err != nil {
				failed = true
				continue
			}
			_ = resp.Body.Close()
			if resp.StatusCode >= 500 || resp.StatusCode == 429 {
				failed = true
			}
		}
		switch {
		case failed && !fallback:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		default:
			_, _ = fmt.Fprint(w, "ok")
		}
	})))
	t.Cleanup(srv.Close)
	return srv
}

func TestHandlerOverloadAsksNotToRetry(t *testing.T) {
	l, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	mid := startMid(t, client(t, learnt()), false, leafSrv.URL)
	g := policy.NewGuard(50, 1)
	resp := fetch(t, context.Background(), client(t, g), mid.URL)

	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "never", resp.Header.Get("Retry-Pushback"))
	require.EqualValues(t, 4, l.requests.Load(), "the mid retried once; its caller did not retry it")
	err := retryhttp.Err(resp)
	require.ErrorIs(t, err, retry.ErrPushback)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 1, re.Attempts)
	require.Equal(t, retry.ErrPushback, re.Cause)
	require.Equal(t, 49.0, protocol(g).Tokens(), "the guard counts the pushback as the overload of a first try")
}

func TestHandlerSignalCarriesNoDetail(t *testing.T) {
	_, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(plain.Close)
	mid := startMid(t, client(t, learnt()), false, leafSrv.URL)
	raw := &http.Client{}
	a, b := fetch(t, context.Background(), raw, mid.URL), fetch(t, context.Background(), raw, plain.URL)
	for _, h := range []http.Header{a.Header, b.Header} {
		h.Del("Date")
	}
	b.Header.Set("Retry-Pushback", "never")
	require.Equal(t, b.Header, a.Header, "the signal is one header, and nothing else is added")
}

// TestHandlerOverloadByChanceKeepsRetries: a call whose four attempts all
// met a 429, at a dependency the guard still finds healthy, is bad luck at
// a server that sheds a share of its requests: the caller's retry is let
// through, and succeeds.
func TestHandlerOverloadByChanceKeepsRetries(t *testing.T) {
	var n atomic.Int32
	leafSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 4 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	t.Cleanup(leafSrv.Close)
	mid := startMid(t, client(t, policy.NewGuard(50, 1)), false, leafSrv.URL)
	resp := fetch(t, context.Background(), client(t, nil), mid.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the caller's retry reached the leaf again")
	require.EqualValues(t, 5, n.Load())
}

func TestHandlerPartialFailureKeepsRetries(t *testing.T) {
	l, leafSrv := startLeaf(t, http.StatusServiceUnavailable) // fast failures, a full guard: could be bad luck
	mid := startMid(t, client(t, policy.NewGuard(50, 1)), false, leafSrv.URL)
	resp := fetch(t, context.Background(), client(t, nil), mid.URL)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Retry-Pushback"))
	require.ErrorIs(t, retryhttp.Err(resp), retry.ErrExhausted)
	require.EqualValues(t, 4+3, l.requests.Load(), "4 for the first request, then one for each retry of it")
	require.Equal(t, "3", l.previous.Load(), "the mid's call while serving the fourth attempt says three came before")
}

func TestHandlerFallbackSendsNoSignal(t *testing.T) {
	_, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	mid := startMid(t, client(t, nil), true, leafSrv.URL)
	resp := fetch(t, context.Background(), client(t, nil), mid.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Retry-Pushback"))
}

func TestHandlerDownstreamWithoutRetrykit(t *testing.T) {
	l, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	mid := startMid(t, &http.Client{}, false, leafSrv.URL)
	resp := fetch(t, context.Background(), client(t, nil), mid.URL)
	require.Empty(t, resp.Header.Get("Retry-Pushback"), "nothing was recorded: the server answers as without the Handler")
	require.EqualValues(t, 4, l.requests.Load(), "the caller retried the mid")
}

func TestHandlerLastFailedDependencyCounts(t *testing.T) {
	_, overloaded := startLeaf(t, http.StatusTooManyRequests)
	_, flaky := startLeaf(t, http.StatusServiceUnavailable)
	// One guard per dependency, as the docs ask: the overloaded leaf's has
	// seen it in trouble.
	down := &http.Client{Transport: byHost{
		overloaded.Listener.Addr().String(): client(t, learnt()).Transport,
		flaky.Listener.Addr().String():      client(t, policy.NewGuard(50, 1)).Transport,
	}}
	for _, tc := range []struct {
		name   string
		urls   []string
		signal string
	}{
		{"overloaded last", []string{flaky.URL, overloaded.URL}, "never"},
		{"flaky last", []string{overloaded.URL, flaky.URL}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mid := startMid(t, down, false, tc.urls...)
			resp := fetch(t, context.Background(), &http.Client{}, mid.URL)
			require.Equal(t, tc.signal, resp.Header.Get("Retry-Pushback"))
		})
	}
}

func TestHandlerHopsOwnFailuresAreRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connections are refused
	c := client(t, nil)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	_, err := c.Do(req)
	require.ErrorIs(t, err, retry.ErrExhausted)
	require.NotErrorIs(t, err, retry.ErrPushback)
	var re *retry.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, 4, re.Attempts)
}

func TestHandlerGarbledPreviousAttempts(t *testing.T) {
	l, leafSrv := startLeaf(t, http.StatusServiceUnavailable)
	mid := startMid(t, client(t, nil), false, leafSrv.URL)
	for _, v := range []string{"x", "-3", ""} {
		l.requests.Store(0)
		req, _ := http.NewRequest(http.MethodGet, mid.URL, nil)
		req.Header.Set("Retry-Previous-Attempts", v)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.EqualValues(t, 4, l.requests.Load(), "%q counts as a first attempt", v)
	}
}

func TestHandlerPushbackStopsHedgedRequest(t *testing.T) {
	_, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	mid := startMid(t, client(t, learnt()), false, leafSrv.URL)
	var calls atomic.Int32
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		mid.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(counted.Close)
	tr, err := retryhttp.New(nil, hopPolicy.WithHedging(policy.Hedging{Delay: time.Hour}))
	require.NoError(t, err)
	resp := fetch(t, context.Background(), &http.Client{Transport: tr}, counted.URL)
	require.Equal(t, "never", resp.Header.Get("Retry-Pushback"))
	require.ErrorIs(t, retryhttp.Err(resp), retry.ErrPushback)
	require.EqualValues(t, 1, calls.Load(), "a hedged request is not retried either")
}

func TestHandlerKeepsTheWritersFlusher(t *testing.T) {
	srv := httptest.NewServer(retryhttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, "part")
		require.NoError(t, http.NewResponseController(w).Flush())
	})))
	t.Cleanup(srv.Close)
	resp := fetch(t, context.Background(), &http.Client{}, srv.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestHandlerUnretriedFailureCountsAsLast(t *testing.T) {
	_, overloaded := startLeaf(t, http.StatusTooManyRequests)
	_, broken := startLeaf(t, http.StatusInternalServerError) // not retried: the Transport's first try is final
	mid := startMid(t, client(t, nil), false, overloaded.URL, broken.URL)
	resp := fetch(t, context.Background(), &http.Client{}, mid.URL)
	require.Empty(t, resp.Header.Get("Retry-Pushback"), "the call that failed last was a plain 500")
}

// An informational status the handler writes first, such as 103 Early
// Hints, carries no pushback, and the final status gets it exactly as
// without the 1xx.
func TestHandlerPushbackAfterAnInformationalStatus(t *testing.T) {
	_, leafSrv := startLeaf(t, http.StatusTooManyRequests)
	down := client(t, learnt())
	for _, tc := range []struct {
		name  string
		hints bool
	}{
		{"no 1xx", false},
		{"103 first", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(retryhttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.hints {
					w.Header().Set("Link", "</style.css>; rel=preload")
					w.WriteHeader(http.StatusEarlyHints)
				}
				req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, leafSrv.URL, nil)
				if resp, err := down.Do(req); err == nil {
					_ = resp.Body.Close()
				}
				http.Error(w, "unavailable", http.StatusServiceUnavailable)
			})))
			t.Cleanup(srv.Close)
			var informational []int
			var early []http.Header
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
					informational = append(informational, code)
					early = append(early, http.Header(h))
					return nil
				},
			})
			resp := fetch(t, ctx, &http.Client{}, srv.URL)
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			require.Equal(t, "never", resp.Header.Get("Retry-Pushback"), "the final status")
			if !tc.hints {
				require.Empty(t, informational)
				return
			}
			require.Equal(t, []int{http.StatusEarlyHints}, informational)
			require.Equal(t, "</style.css>; rel=preload", early[0].Get("Link"))
			require.Empty(t, early[0].Get("Retry-Pushback"), "the 103")
		})
	}
}

// A previous-attempts count saturates at the largest int, where it is read
// and where attempts are added to it, rather than wrapping negative and
// being dropped. A negative or garbled value counts as 0.
func TestHandlerPreviousAttemptsSaturate(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the cases are those of a 64-bit int")
	}
	const most = "9223372036854775807" // math.MaxInt64
	for _, tc := range []struct {
		in   string
		sent []string // the header of the mid's first attempt downstream, and of its retry
	}{
		{"", []string{"", "1"}},
		{"3", []string{"3", "4"}},
		{"9223372036854775806", []string{"9223372036854775806", most}},
		{most, []string{most, most}},
		{"9223372036854775808", []string{most, most}},
		{"99999999999999999999999", []string{most, most}},
		{"-1", []string{"", "1"}},
		{"-9223372036854775809", []string{"", "1"}},
		{"x", []string{"", "1"}},
		{"1e3", []string{"", "1"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			// The leaf drops its first connection before any answer, a
			// failure that the mid's call retries even while it serves a
			// retry.
			leafSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Get("Retry-Previous-Attempts"))
				first := len(seen) == 1
				mu.Unlock()
				if first {
					conn, _, err := http.NewResponseController(w).Hijack()
					require.NoError(t, err)
					_ = conn.Close()
				}
			}))
			t.Cleanup(leafSrv.Close)
			mid := startMid(t, client(t, nil), false, leafSrv.URL)
			req, err := http.NewRequest(http.MethodGet, mid.URL, nil)
			require.NoError(t, err)
			req.Header.Set("Retry-Previous-Attempts", tc.in)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusOK, resp.StatusCode, "the mid's retry reached the leaf")
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, tc.sent, seen)
		})
	}
}

// A hedged Transport used by a handler behind Handler that serves a retry
// makes one attempt, as an unhedged one does: no hedge delay is armed, and
// the leaf gets one request, however slow its answer.
func TestHandlerServingARetryHedgesNothing(t *testing.T) {
	var requests atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	leafSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			close(entered)
			select { // slow: past the hedge delay, until the test lets it answer
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(leafSrv.Close)
	clk := clocktest.NewCounted()
	tr, err := retryhttp.New(nil, hopPolicy.WithClock(clk).WithHedging(policy.Hedging{Delay: time.Second}))
	require.NoError(t, err)
	mid := startMid(t, &http.Client{Transport: tr}, false, leafSrv.URL)

	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, mid.URL, nil)
		req.Header.Set("Retry-Previous-Attempts", "1") // the request is a retry
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resp = nil
		} else {
			_ = resp.Body.Close()
		}
		done <- resp
	}()
	<-entered
	if clk.Waits() > 0 {
		clk.Step(t) // a hedge delay was armed: let its hedge go
	}
	close(release)
	resp := <-done
	require.NotNil(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 1, requests.Load(), "one attempt: the request served is a retry already")
	require.Zero(t, clk.Waits(), "no hedge delay was armed")
}
