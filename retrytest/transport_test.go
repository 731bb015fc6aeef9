//go:build go1.25

package retrytest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrytest"
)

// upstream starts a loopback server for a counted handler.
func upstream(t *testing.T) (*httptest.Server, *counted) {
	t.Helper()
	h := &counted{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

// closeTracker is a request body that tells whether it was closed.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestTransportFaultsInsteadOfTheRequest(t *testing.T) {
	clk := clock.NewMock()
	for _, tc := range []struct {
		name   string
		fault  retrytest.Fault
		status int
		header string // Retry-After
		is     error
		msg    string
	}{
		{"a status with Retry-After", retrytest.Fault{Status: 503, Hint: 3 * time.Second}, 503, "3", nil, ""},
		{"a status with a dated Retry-After", retrytest.Fault{Status: 503, Hint: 3 * time.Second, HintDate: true}, 503, "Thu, 01 Jan 1970 00:00:03 GMT", nil, ""},
		{"an error", retrytest.Fault{Err: errDown}, 0, "", errDown, "down"},
		{"a reset", retrytest.Fault{Reset: true}, 0, "", syscall.ECONNRESET, "read tcp: read: connection reset by peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, h := upstream(t)
			p := forever(tc.fault)
			p.Clock = clk
			tr := mustNew(t, p).Transport(srv.Client().Transport)
			reqBody := &closeTracker{Reader: strings.NewReader("x")}
			req, err := http.NewRequest(http.MethodPut, srv.URL, reqBody)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.True(t, reqBody.closed, "the request's body is closed")
			require.Zero(t, h.n.Load(), "nothing was sent")
			if tc.status == 0 {
				require.Nil(t, resp)
				require.EqualError(t, err, tc.msg)
				require.ErrorIs(t, err, tc.is)
				require.True(t, neterr.Connection(err) == (tc.is == syscall.ECONNRESET), "a reset is a connection error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.status, resp.StatusCode)
			require.Equal(t, "503 Service Unavailable", resp.Status)
			require.Equal(t, tc.header, resp.Header.Get("Retry-After"))
			require.Same(t, req, resp.Request)
			text, err := readAll(t, resp)
			require.NoError(t, err)
			require.Equal(t, "Service Unavailable\n", text)
			require.EqualValues(t, len(text), resp.ContentLength)
		})
	}
}

func TestTransportErrWithHint(t *testing.T) {
	tr := mustNew(t, forever(retrytest.Fault{Err: errDown, Hint: 2 * time.Second})).Transport(nil)
	req, err := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	require.ErrorIs(t, err, errDown)
	// The mark of retry.After: a call that gets this error waits the hint.
	synctest.Test(t, func(t *testing.T) {
		start, n := time.Now(), 0
		_ = retry.Do(context.Background(), func(context.Context) error {
			if n++; n == 1 {
				return err
			}
			return nil
		}, policy.Constant(time.Hour))
		require.Equal(t, 2*time.Second, time.Since(start))
	})
}

func TestTransportPartial(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault retrytest.Fault
		read  string
		is    error
	}{
		{"a reset after the headers", retrytest.Fault{Partial: true, Reset: true}, "", syscall.ECONNRESET},
		{"truncated after 30 bytes", retrytest.Fault{Partial: true, Truncate: true, After: 30}, body[:30], io.ErrUnexpectedEOF},
		{"an error after 99 bytes", retrytest.Fault{Partial: true, Err: errDown, After: 99}, body[:99], errDown},
		{"an error at the end", retrytest.Fault{Partial: true, Err: errDown, After: 100}, body, errDown},
		{"past the end", retrytest.Fault{Partial: true, Err: errDown, After: 101}, body, errDown},
		{"truncated past the end of a sized body", retrytest.Fault{Partial: true, Truncate: true, After: 101}, body, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, h := upstream(t)
			tr := mustNew(t, forever(tc.fault)).Transport(srv.Client().Transport)
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			text, err := readAll(t, resp)
			require.Equal(t, tc.read, text)
			require.ErrorIs(t, err, tc.is)
			require.Equal(t, int32(1), h.n.Load())
		})
	}
}

func TestTransportPanics(t *testing.T) {
	srv, _ := upstream(t)
	tr := mustNew(t, forever(retrytest.Fault{Panic: "boom"})).Transport(srv.Client().Transport)
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	require.PanicsWithValue(t, "boom", func() { _, _ = tr.RoundTrip(req) })
}

func TestTransportMatch(t *testing.T) {
	srv, h := upstream(t)
	p := forever(retrytest.Fault{Status: 503})
	p.Match = func(r *http.Request) bool { return r.Header.Get("X-Fail") == "yes" }
	in := mustNew(t, p)
	client := &http.Client{Transport: in.Transport(srv.Client().Transport)}
	for _, fail := range []string{"no", "yes", ""} {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		req.Header.Set("X-Fail", fail)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = readAll(t, resp)
		want := 200
		if fail == "yes" {
			want = 503
		}
		require.Equal(t, want, resp.StatusCode)
	}
	require.Equal(t, int32(2), h.n.Load())
	require.Equal(t, 1, in.Counts().Calls)
	client.CloseIdleConnections() // passed on to the base
}

func TestTransportNil(t *testing.T) {
	reqBody := &closeTracker{Reader: strings.NewReader("x")}
	req, err := http.NewRequest(http.MethodPut, "http://dependency.test/", reqBody)
	require.NoError(t, err)
	_, err = (*retrytest.Injector)(nil).Transport(nil).RoundTrip(req)
	require.EqualError(t, err, "retrytest: nil *Injector (New returned an error?)")
	require.True(t, reqBody.closed)
}

func TestTransportTimedFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   retrytest.Fault
		timeout time.Duration
		read    string
		is      error
		took    time.Duration
	}{
		{"latency", retrytest.Fault{Latency: time.Second}, 0, body, nil, time.Second},
		{"a stall the client's timeout cuts", retrytest.Fault{Stall: true}, 4 * time.Second, "", context.DeadlineExceeded, 4 * time.Second},
		{"a slow body", retrytest.Fault{Partial: true, After: 10, Latency: 3 * time.Second}, 0, body, nil, 3 * time.Second},
		{"a body stalled after 10 bytes", retrytest.Fault{Partial: true, After: 10, Stall: true}, 4 * time.Second, body[:10], context.DeadlineExceeded, 4 * time.Second},
		{"a slow reset", retrytest.Fault{Partial: true, After: 10, Latency: time.Second, Reset: true}, 0, body[:10], syscall.ECONNRESET, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := mustNew(t, forever(tc.fault))
				srv := retrytest.NewServer(&counted{})
				defer srv.Close()
				defer in.Close()
				client := &http.Client{Transport: in.Transport(srv.Client().Transport), Timeout: tc.timeout}
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

func TestTransportBodyStallEndsWithClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, forever(retrytest.Fault{Partial: true, Stall: true}))
		srv := retrytest.NewServer(&counted{})
		defer srv.Close()
		resp, err := (&http.Client{Transport: in.Transport(srv.Client().Transport)}).Get(srv.URL)
		require.NoError(t, err)
		read := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(resp.Body)
			read <- err
		}()
		synctest.Wait()
		require.NoError(t, resp.Body.Close())
		require.ErrorIs(t, <-read, context.Canceled, "closing the body ends its stall")

		resp, err = (&http.Client{Transport: in.Transport(srv.Client().Transport)}).Get(srv.URL)
		require.NoError(t, err)
		go func() {
			_, err := io.ReadAll(resp.Body)
			read <- err
		}()
		synctest.Wait()
		in.Close()
		require.ErrorIs(t, <-read, retrytest.ErrClosed, "closing the injector ends it too")
		require.NoError(t, resp.Body.Close())
	})
}
