//go:build go1.25

package retryhttp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// transportTimeout is the base transport's timeout in these tests: real
// time, since it is net/http's own timer that must fire.
const transportTimeout = 50 * time.Millisecond

// tlsTimeout is the TLS handshake timeout of its test.
const tlsTimeout = 500 * time.Millisecond

// runs is how many times in a row each kind of timeout must be retried;
// tlsRuns for the TLS handshake, each of whose runs waits out tlsTimeout.
const runs, tlsRuns = 20, 5

// hangFirst hangs the first request until the client drops it, and answers
// "ok" to the others.
func hangFirst(hits *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// getRetried sends a GET through base retried at once, at most five
// attempts, and returns the body and the errors of the retried attempts.
func getRetried(t *testing.T, base http.RoundTripper, url string) (string, []error) {
	t.Helper()
	var errs []error
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(5),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { errs = append(errs, e.Err) }})))
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		return "", append(errs, err)
	}
	return body(t, resp), errs
}

// requireTimeoutRetried checks that one run retried its first attempt,
// which failed with a timeout saying msg, and then succeeded. On a loaded
// machine a later attempt may time out too (a TLS handshake under -race can
// take longer than the test's short timeout); it must then be retried alike.
func requireTimeoutRetried(t *testing.T, run int, got string, errs []error, msg string) {
	t.Helper()
	require.Equal(t, "ok", got, "run %d: %v", run, errs)
	require.NotEmpty(t, errs, "run %d", run)
	for _, err := range errs {
		require.ErrorContains(t, err, msg, "run %d", run)
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "run %d: %v is a timeout", run, err)
	}
}

func TestResponseHeaderTimeoutRetried(t *testing.T) {
	t.Parallel() // waits on real timers, beside the other timeout tests
	for run := range runs {
		var hits atomic.Int32
		srv := httptest.NewServer(hangFirst(&hits))
		base := &http.Transport{ResponseHeaderTimeout: transportTimeout}
		got, errs := getRetried(t, base, srv.URL)
		base.CloseIdleConnections()
		srv.Close()
		requireTimeoutRetried(t, run, got, errs, "timeout awaiting response headers")
		require.Equal(t, int32(len(errs)+1), hits.Load(), "every attempt reached the server")
	}
}

func TestIOTimeoutRetried(t *testing.T) {
	t.Parallel() // waits on real timers, beside the other timeout tests
	for run := range runs {
		var hits atomic.Int32
		srv := httptest.NewServer(hangFirst(&hits))
		var dials atomic.Int32
		base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil && dials.Add(1) == 1 {
				// The first connection has a deadline: its read of the
				// response fails with an i/o timeout.
				_ = c.SetDeadline(time.Now().Add(transportTimeout))
			}
			return c, err
		}}
		got, errs := getRetried(t, base, srv.URL)
		base.CloseIdleConnections()
		srv.Close()
		requireTimeoutRetried(t, run, got, errs, "i/o timeout")
		require.Equal(t, int32(len(errs)+1), hits.Load(), "every attempt reached the server")
	}
}

// fullListener returns a loopback listener whose accept queue is full (a
// backlog of 0 and one connection made and never accepted), so that a dial
// to it hangs until the dialer's timeout, and the connection that fills it.
func fullListener(t *testing.T) (net.Listener, net.Conn) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	filler, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	return ln, filler
}

func TestDialTimeoutRetried(t *testing.T) {
	t.Parallel() // waits on real timers, beside the other timeout tests
	for run := range runs {
		ln, filler := fullListener(t)
		var hits atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			_, _ = io.WriteString(w, "ok")
		}))
		srv.Listener.Close()
		srv.Listener = ln
		base := &http.Transport{DialContext: (&net.Dialer{Timeout: transportTimeout}).DialContext}
		var errs []error
		tr := build(t, base, policy.Constant(0).WithMaxAttempts(5), retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) {
			errs = append(errs, e.Err)
			if len(errs) == 1 {
				// The dial timed out: empty the queue and start serving, so
				// that the retry connects.
				c, err := ln.Accept()
				if err == nil {
					_ = c.Close()
				}
				srv.Start()
			}
		}})))
		resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String())
		got := ""
		if err == nil {
			got = body(t, resp)
		} else {
			errs = append(errs, err)
		}
		base.CloseIdleConnections()
		_ = filler.Close()
		if len(errs) > 0 {
			srv.Close()
		} else {
			_ = ln.Close()
		}
		requireTimeoutRetried(t, run, got, errs, "i/o timeout")
		require.Equal(t, int32(1), hits.Load())
	}
}

// silentFirst is a listener that accepts its first connection and never
// answers on it (until closed), and hands the next ones to the server.
type silentFirst struct {
	net.Listener
	once sync.Once
	held net.Conn
}

func (l *silentFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := false
		l.once.Do(func() { first = true })
		if !first {
			return c, nil
		}
		l.held = c
	}
}

func (l *silentFirst) Close() error {
	if l.held != nil {
		_ = l.held.Close()
	}
	return l.Listener.Close()
}

func TestTLSHandshakeTimeoutRetried(t *testing.T) {
	t.Parallel() // waits on real timers, beside the other timeout tests
	for run := range tlsRuns {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}))
		srv.Listener = &silentFirst{Listener: srv.Listener}
		srv.StartTLS()
		base := srv.Client().Transport.(*http.Transport).Clone()
		// A handshake takes far longer than the other steps under the
		// race detector on a busy machine: a longer timeout, so that only
		// the silent first connection runs out of it.
		base.TLSHandshakeTimeout = tlsTimeout
		got, errs := getRetried(t, base, srv.URL)
		base.CloseIdleConnections()
		srv.Close()
		requireTimeoutRetried(t, run, got, errs, "TLS handshake timeout")
	}
}

func TestUntrustedCertificateNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	base := &http.Transport{TLSClientConfig: &tls.Config{}}
	defer base.CloseIdleConnections()
	got, errs := getRetried(t, base, srv.URL)
	require.Empty(t, got)
	require.Len(t, errs, 1, "no retry, the call's own error")
	require.ErrorContains(t, errs[0], "certificate")
}

func TestCallerDeadlineNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(hangFirst(&hits))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	var retries int
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(3),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { retries++ }})))

	ctx, cancel := context.WithTimeout(context.Background(), transportTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	_, err = (&http.Client{Transport: tr}).Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Zero(t, retries, "the caller's own deadline ends the call")
	require.Equal(t, int32(1), hits.Load())

	hits.Store(0)
	_, err = (&http.Client{Transport: tr, Timeout: transportTimeout}).Get(srv.URL)
	require.Error(t, err)
	require.Zero(t, retries, "so does http.Client.Timeout")
	require.Equal(t, int32(1), hits.Load())
}

func TestAttemptTimeoutCutsAHungAttemptAndRetries(t *testing.T) {
	arrived := make(chan int32, 10)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		arrived <- n
		if n == 1 {
			<-r.Context().Done() // never answers; the cut-off drops the connection
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	clk := newTimeoutClock()
	var errs []error
	tr := build(t, base, policy.Constant(time.Second).WithAttemptTimeout(5*time.Second).WithMaxAttempts(3).WithClock(clk),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { errs = append(errs, e.Err) }})))

	done := make(chan *http.Response, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	require.Equal(t, 5*time.Second, clk.nextTimeout(t))
	require.Equal(t, int32(1), <-arrived)
	clk.Add(5 * time.Second) // the attempt has not answered within its timeout
	require.Equal(t, time.Second, clk.Step(t), "the cut-off attempt is retried after the back-off")
	require.Equal(t, int32(2), <-arrived)
	resp := <-done
	require.Equal(t, "ok", body(t, resp))
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], retry.ErrAttemptTimeout)
	require.NotErrorIs(t, errs[0], context.Canceled, "the caller cancelled nothing")
	require.EqualError(t, errs[0], "retryhttp: no response headers within the attempt timeout of 5s", "and its message does not say so either")
}

func TestAttemptTimeoutNeverCutsTheFinalBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "headers in time, ")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "the rest much later")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	clk := newTimeoutClock()
	tr := build(t, base, policy.Constant(time.Second).WithAttemptTimeout(5*time.Second).WithClock(clk))

	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	require.NoError(t, err)
	clk.Add(time.Hour) // far past the attempt timeout, while the body is read
	close(release)
	require.Equal(t, "headers in time, the rest much later", body(t, resp))
	require.Zero(t, clk.Waits())
}

func TestAttemptTimeoutOnTheRealClock(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(hangFirst(&hits))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	got, errs := getRetriedUnder(t, base, srv.URL, policy.Constant(0).WithAttemptTimeout(transportTimeout).WithMaxAttempts(5))
	require.Equal(t, "ok", got)
	require.NotEmpty(t, errs)
	for _, err := range errs { // a loaded machine may cut a later attempt too
		require.ErrorIs(t, err, retry.ErrAttemptTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded, "as package retry's attempt timeouts")
		require.NotErrorIs(t, err, context.Canceled, "the caller cancelled nothing")
	}
}

func getRetriedUnder(t *testing.T, base http.RoundTripper, url string, p policy.Policy) (string, []error) {
	t.Helper()
	var errs []error
	tr := build(t, base, p, retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) { errs = append(errs, e.Err) }})))
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		return "", append(errs, err)
	}
	return body(t, resp), errs
}

func TestAttemptTimeoutBoundsASingleAttempt(t *testing.T) {
	arrived := make(chan struct{}, 1)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.ReadAll(r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	clk := newTimeoutClock()
	tr := build(t, base, policy.Constant(time.Second).WithAttemptTimeout(5*time.Second).WithClock(clk))

	// A body that cannot be rewound: one attempt, still bounded.
	req, err := http.NewRequest(http.MethodPut, srv.URL, io.NopCloser(strings.NewReader("stream")))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	<-arrived
	clk.Add(5 * time.Second)
	err = <-done
	require.ErrorIs(t, err, retry.ErrAttemptTimeout)
	require.Equal(t, int32(1), hits.Load())
}

// An attempt cut off by its timeout whose transport returns only after the
// caller's deadline has passed reports the caller's deadline, not the
// attempt's own cancellation (a soak saw context.Canceled).
func TestAttemptTimeoutThenTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			time.Sleep(60 * time.Millisecond) // the transport is slow to notice
			return nil, r.Context().Err()
		})
		tr, err := retryhttp.New(slow, policy.Constant(time.Millisecond).WithMaxAttempts(3).WithAttemptTimeout(100*time.Millisecond))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://dependency.test/", nil)
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, context.Canceled)
	})
}
