//go:build go1.25

package retrytest_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrytest"
)

// body is what the real handler of these tests answers: 100 bytes.
var body = strings.Repeat("0123456789", 10)

// counted is a handler that answers body, with its length, and counts the
// requests it serves.
type counted struct{ n atomic.Int32 }

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	w.Header().Set("Content-Length", "100")
	_, _ = io.WriteString(w, body)
}

// faulty starts a loopback server that serves a counted handler through
// in's Handler, closed (the injector first) at the end of the test.
func faulty(t *testing.T, in *retrytest.Injector) (*httptest.Server, *counted) {
	t.Helper()
	h := &counted{}
	srv := httptest.NewUnstartedServer(in.Handler(h))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panics a fault makes
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(in.Close)
	return srv, h
}

// get sends one GET to url on a connection of its own, so that net/http
// does not send it again on a fresh connection after a reset.
func get(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return (&http.Client{Transport: tr}).Get(url)
}

func readAll(t *testing.T, resp *http.Response) (string, error) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestHandlerStatusWithRetryAfter(t *testing.T) {
	clk := clock.NewMock()
	clk.Add(1500 * time.Millisecond) // 00:00:01.5
	for _, tc := range []struct {
		name  string
		fault retrytest.Fault
		want  string
	}{
		{"in seconds, rounded up", retrytest.Fault{Status: 503, Hint: 1500 * time.Millisecond}, "2"},
		{"as a date, rounded up", retrytest.Fault{Status: 429, Hint: 2 * time.Second, HintDate: true}, "Thu, 01 Jan 1970 00:00:04 GMT"},
		{"no hint", retrytest.Fault{Status: 502}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := forever(tc.fault)
			p.Clock = clk
			srv, h := faulty(t, mustNew(t, p))
			resp, err := get(t, srv.URL)
			require.NoError(t, err)
			require.Equal(t, tc.fault.Status, resp.StatusCode)
			require.Equal(t, tc.want, resp.Header.Get("Retry-After"))
			text, err := readAll(t, resp)
			require.NoError(t, err)
			require.Equal(t, http.StatusText(tc.fault.Status)+"\n", text)
			require.Zero(t, h.n.Load(), "the handler was not called")
		})
	}
}

func TestHandlerResetBeforeHeaders(t *testing.T) {
	srv, h := faulty(t, mustNew(t, forever(retrytest.Fault{Reset: true})))
	_, err := get(t, srv.URL)
	require.ErrorIs(t, err, syscall.ECONNRESET)
	require.Zero(t, h.n.Load())
}

func TestHandlerPartial(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault retrytest.Fault
		read  string // what the client reads of the body
		is    error  // and what error comes after
	}{
		{"a reset after the headers", retrytest.Fault{Partial: true, Reset: true}, "", syscall.ECONNRESET},
		{"a reset after 30 bytes", retrytest.Fault{Partial: true, Reset: true, After: 30}, body[:30], syscall.ECONNRESET},
		{"truncated after 30 bytes", retrytest.Fault{Partial: true, Truncate: true, After: 30}, body[:30], io.ErrUnexpectedEOF},
		{"truncated at its end", retrytest.Fault{Partial: true, Truncate: true, After: 1000}, body, nil},
		{"an error, which a server can only cut", retrytest.Fault{Partial: true, Err: errDown, After: 10}, body[:10], io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, h := faulty(t, mustNew(t, forever(tc.fault)))
			resp, err := get(t, srv.URL)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			text, err := readAll(t, resp)
			require.Equal(t, tc.read, text)
			if tc.is == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.is)
			}
			require.Equal(t, int32(1), h.n.Load())
		})
	}
}

func TestHandlerStallEndsWithClose(t *testing.T) {
	stalled := make(chan struct{})
	p := forever(retrytest.Fault{Stall: true})
	p.OnInject = func(context.Context, retrytest.Injection) { close(stalled) }
	in := mustNew(t, p)
	srv, _ := faulty(t, in)
	done := make(chan error, 1)
	go func() {
		resp, err := get(t, srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-stalled
	in.Close() // as the stall starts, or while it lasts: either way it ends
	require.ErrorIs(t, <-done, io.EOF, "the connection closed with no answer")
}

func TestHandlerPanicDropsTheConnection(t *testing.T) {
	srv, h := faulty(t, mustNew(t, forever(retrytest.Fault{Panic: "boom"})))
	_, err := get(t, srv.URL)
	require.ErrorIs(t, err, io.EOF)
	require.Zero(t, h.n.Load())
}

func TestHandlerMatch(t *testing.T) {
	p := forever(retrytest.Fault{Status: 503})
	p.Match = func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/orders" }
	in := mustNew(t, p)
	srv, h := faulty(t, in)
	for _, tc := range []struct {
		method, path string
		want         int
	}{{"GET", "/orders", 200}, {"POST", "/users", 200}, {"POST", "/orders", 503}} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("x"))
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = readAll(t, resp)
		require.Equal(t, tc.want, resp.StatusCode, "%s %s", tc.method, tc.path)
	}
	require.Equal(t, int32(2), h.n.Load())
	require.Equal(t, retrytest.Counts{Calls: 1, Injected: 1, Statuses: 1}, in.Counts(), "requests Match leaves out are not calls")
}

func TestHandlerCannotSendAnError(t *testing.T) {
	srv, h := faulty(t, mustNew(t, forever(retrytest.Fault{Err: errDown})))
	resp, err := get(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 500, resp.StatusCode)
	text, _ := readAll(t, resp)
	require.Equal(t, "retrytest: an HTTP server cannot fail a request with an error; give the fault a Status: down\n", text)
	require.Zero(t, h.n.Load())
}

func TestHandlerNil(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Handler
		want string
	}{
		{"a nil injector", (*retrytest.Injector)(nil).Handler(&counted{}), "retrytest: nil *Injector (New returned an error?)\n"},
		{"a nil handler", mustNew(t, forever(retrytest.Fault{})).Handler(nil), "retrytest: nil http.Handler\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			tc.h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			require.Equal(t, 500, w.Code)
			require.Equal(t, tc.want, w.Body.String())
		})
	}
}

// Over HTTP/2 a connection cannot be taken over: a reset resets the stream.
func TestHandlerResetOverHTTP2(t *testing.T) {
	in := mustNew(t, forever(retrytest.Fault{Reset: true}))
	srv := httptest.NewUnstartedServer(in.Handler(&counted{}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	require.Contains(t, err.Error(), "stream error")
	require.Equal(t, 1, in.Counts().Resets)
}

// The faults that take time, on the in-memory server inside a bubble.
func TestHandlerTimedFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   retrytest.Fault
		timeout time.Duration // the client's
		read    string
		is      error
		took    time.Duration
	}{
		{"latency, then the answer", retrytest.Fault{Latency: 3 * time.Second}, 0, body, nil, 3 * time.Second},
		{"a stall the client's timeout cuts", retrytest.Fault{Stall: true}, 5 * time.Second, "", context.DeadlineExceeded, 5 * time.Second},
		{"a slow body", retrytest.Fault{Partial: true, After: 40, Latency: 2 * time.Second}, 0, body, nil, 2 * time.Second},
		{"a body stalled after 40 bytes", retrytest.Fault{Partial: true, After: 40, Stall: true}, 5 * time.Second, body[:40], context.DeadlineExceeded, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := mustNew(t, forever(tc.fault))
				srv := retrytest.NewServer(in.Handler(&counted{}))
				defer srv.Close()
				defer in.Close()
				client := srv.Client()
				client.Timeout = tc.timeout
				start := time.Now()
				text, err := func() (string, error) {
					resp, err := client.Get(srv.URL)
					if err != nil {
						return "", err
					}
					return readAll(t, resp)
				}()
				require.Equal(t, tc.read, text)
				if tc.is == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tc.is)
				}
				require.Equal(t, tc.took, time.Since(start))
			})
		})
	}
}

// A body shorter than After is struck at its end: one whose length the
// client was not told, that is, for one with a Content-Length is whole.
func TestHandlerStrikesAtTheEndOfAShortBody(t *testing.T) {
	unsized := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) })
	for _, tc := range []struct {
		name  string
		fault retrytest.Fault
		is    error
		took  time.Duration
	}{
		{"a pause", retrytest.Fault{Partial: true, After: 1000, Latency: 2 * time.Second}, nil, 2 * time.Second},
		{"a truncation", retrytest.Fault{Partial: true, After: 1000, Truncate: true}, io.ErrUnexpectedEOF, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := mustNew(t, forever(tc.fault))
				srv := retrytest.NewServer(in.Handler(unsized))
				defer srv.Close()
				start := time.Now()
				resp, err := srv.Client().Get(srv.URL)
				require.NoError(t, err)
				text, err := readAll(t, resp)
				require.Equal(t, body, text)
				if tc.is == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tc.is)
				}
				require.Equal(t, tc.took, time.Since(start))
			})
		})
	}
}
