package neterr_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/retry"
)

// TestConnection feeds Connection the errors that real loopback
// servers, dials and requests produce, and builds by hand only those that
// no loopback test can provoke: a broken pipe, DNS failures, an address
// error of Plan 9, and errors that a dialer wraps.
func TestConnection(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want bool
	}{
		{"refused", refused, true},
		{"reset", func(t *testing.T) error { return get(t, plain(t), "http://"+rawServer(t, reset)) }, true},
		{"EOF before the answer", func(t *testing.T) error { return get(t, plain(t), "http://"+rawServer(t, hangUp)) }, true},
		{"unexpected EOF in the header", func(t *testing.T) error { return get(t, plain(t), "http://"+rawServer(t, halfHeader)) }, true},
		{"read timeout", readTimeout, true},
		{"TLS handshake timeout", handshakeTimeout, true},
		{"another failed dial", is(dialed(errors.New("network is down"))), true},
		{"refused, bare", is(syscall.ECONNREFUSED), true},
		{"reset, bare", is(syscall.ECONNRESET), true},
		{"aborted", is(os.NewSyscallError("read", syscall.ECONNABORTED)), true},
		{"broken pipe", is(os.NewSyscallError("write", syscall.EPIPE)), true},
		{"host not found", is(dialed(&net.DNSError{Err: "no such host", Name: "db-0.db.test", IsNotFound: true})), true},
		{"host not found, bare", is(&net.DNSError{Err: "no such host", Name: "db-0.db.test", IsNotFound: true}), true},
		{"DNS timeout", is(dialed(&net.DNSError{Err: "i/o timeout", Name: "db.test", IsTimeout: true})), true},
		{"DNS temporary failure", is(&net.DNSError{Err: "server misbehaving", Name: "db.test", IsTemporary: true}), true},
		{"attempt timeout", is(retry.ErrAttemptTimeout), true},
		{"deadline", is(context.DeadlineExceeded), true}, // a transport's own timeouts match it; the caller's context tells its deadline apart
		{"deadline under a wrapper that asks only its own error", is(&url.Error{Op: "Get", URL: "http://db.test", Err: fmt.Errorf("read: %w", context.DeadlineExceeded)}), true},

		{"unsupported scheme", func(t *testing.T) error { return get(t, plain(t), "ftp://127.0.0.1/") }, false},
		{"invalid header field", invalidHeader, false},
		{"too many redirects", redirects, false},
		{"unknown authority", func(t *testing.T) error { return get(t, plain(t), tlsServer(t, nil).URL) }, false},
		{"host name mismatch", hostnameMismatch, false},
		{"expired certificate", expired, false},
		{"client certificate required, TLS 1.3", func(t *testing.T) error { return clientCertRequired(t, tls.VersionTLS13) }, false},
		{"client certificate required, TLS 1.2", func(t *testing.T) error { return clientCertRequired(t, tls.VersionTLS12) }, false},
		{"missing port", func(t *testing.T) error { return dialErr(t, "tcp", "127.0.0.1") }, false},
		{"port out of range in the URL", func(t *testing.T) error { return get(t, plain(t), "http://127.0.0.1:99999/") }, false},
		{"unknown network", func(t *testing.T) error { return dialErr(t, "tcp5", "127.0.0.1:80") }, false},
		{"invalid address", is(dialed(net.InvalidAddrError("port should be < 65536"))), false},
		{"TLS alert from QUIC", is(dialed(tls.AlertError(116))), false},
		{"verification error in a dial error", func(t *testing.T) error {
			return dialed(get(t, plain(t), tlsServer(t, nil).URL))
		}, false},
		{"unknown authority in a dial error", is(dialed(x509.UnknownAuthorityError{})), false},
		{"host name mismatch in a dial error", is(dialed(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "db.test"})), false},
		{"invalid certificate in a dial error", is(dialed(x509.CertificateInvalidError{Reason: x509.Expired})), false},
		{"verification error of another kind in a dial error", is(dialed(&tls.CertificateVerificationError{Err: x509.SystemRootsError{}})), false},
		{"cancelled", is(context.Canceled), false},
		{"plain", is(errors.New("flaky")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			require.Error(t, err)
			require.Equal(t, tt.want, neterr.Connection(err), "Connection(%v)", err)
		})
	}
}

// is returns err as it is.
func is(err error) func(*testing.T) error { return func(*testing.T) error { return err } }

// dialed wraps err as a dialer does.
func dialed(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }

func dialErr(t *testing.T, network, addr string) error {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err == nil {
		c.Close()
	}
	return err
}

// refused dials a port that was listened on and then closed.
func refused(t *testing.T) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	err = dialErr(t, "tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	return err
}

// get sends a GET with c and returns its error, which must not be nil.
func get(t *testing.T, c *http.Client, url string) error {
	t.Helper()
	return send(t, c, mustRequest(t, url))
}

func send(t *testing.T, c *http.Client, req *http.Request) error {
	t.Helper()
	resp, err := c.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	return err
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return req
}

// plain returns a client with a transport of its own, closed when the test
// ends.
func plain(t *testing.T) *http.Client {
	t.Helper()
	return clientOf(t, &http.Transport{})
}

func clientOf(t *testing.T, tr *http.Transport) *http.Client {
	t.Helper()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// rawServer starts a loopback TCP server that hands every connection to
// serve, and returns its address. The test ends only after every serve
// has returned.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// readRequest reads the start of a request, enough for the client to be
// waiting for the answer.
func readRequest(c net.Conn) {
	_, _ = c.Read(make([]byte, 4096))
}

func reset(c net.Conn) {
	readRequest(c)
	_ = c.(*net.TCPConn).SetLinger(0) // Close sends RST
}

func hangUp(c net.Conn) { readRequest(c) }

func halfHeader(c net.Conn) {
	readRequest(c)
	_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
}

// silent reads until the client hangs up, and never answers.
func silent(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

func readTimeout(t *testing.T) error {
	c, err := net.Dial("tcp", rawServer(t, silent))
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now()))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	return err
}

// handshakeTimeout starts TLS with a server that never answers. The
// handshake cannot finish, so the transport's timeout fires, however
// short.
func handshakeTimeout(t *testing.T) error {
	err := get(t, clientOf(t, &http.Transport{TLSHandshakeTimeout: time.Millisecond}), "https://"+rawServer(t, silent))
	require.ErrorContains(t, err, "TLS handshake timeout")
	return err
}

func invalidHeader(t *testing.T) error {
	req := mustRequest(t, "http://"+rawServer(t, hangUp))
	req.Header.Set("X-Note", "a\nb")
	return send(t, plain(t), req)
}

func redirects(t *testing.T) error {
	srv := httptest.NewServer(http.RedirectHandler("/", http.StatusFound))
	t.Cleanup(srv.Close)
	err := get(t, plain(t), srv.URL)
	require.ErrorContains(t, err, "redirects")
	return err
}

// tlsServer starts a loopback HTTPS server with cfg (nil: httptest's) and
// no log of failed handshakes.
func tlsServer(t *testing.T, cfg *tls.Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = cfg
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// trusting returns a client that trusts srv's certificate, with edit
// applied to its TLS configuration.
func trusting(t *testing.T, srv *httptest.Server, edit func(*tls.Config)) *http.Client {
	t.Helper()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	edit(tr.TLSClientConfig)
	return clientOf(t, tr)
}

func hostnameMismatch(t *testing.T) error {
	srv := tlsServer(t, nil)
	err := get(t, trusting(t, srv, func(c *tls.Config) { c.ServerName = "db.test" }), srv.URL)
	var want x509.HostnameError
	require.ErrorAs(t, err, &want)
	return err
}

func expired(t *testing.T) error {
	srv := tlsServer(t, nil)
	later := func() time.Time { return time.Now().AddDate(200, 0, 0) }
	err := get(t, trusting(t, srv, func(c *tls.Config) { c.Time = later }), srv.URL)
	var want x509.CertificateInvalidError
	require.ErrorAs(t, err, &want)
	return err
}

// clientCertRequired sends a GET without a client certificate to a server
// that requires one, over TLS of at most version max.
func clientCertRequired(t *testing.T, max uint16) error {
	srv := tlsServer(t, &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert})
	err := get(t, trusting(t, srv, func(c *tls.Config) { c.MaxVersion = max }), srv.URL)
	require.ErrorContains(t, err, "remote error: tls:")
	return err
}
