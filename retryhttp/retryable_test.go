//go:build go1.25

package retryhttp_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// TestTLSRefusalSentOnce: a GET that TLS refuses is sent once, whether
// the client does not trust the server or the server wants a client
// certificate that the client lacks. A server that hangs up is reached
// again, over a new handshake each time.
func TestTLSRefusalSentOnce(t *testing.T) {
	const attempts = 5
	tests := []struct {
		name    string
		cfg     *tls.Config // the server's; nil is httptest's
		trusted bool        // whether the client trusts the server's certificate
		max     uint16      // the client's highest TLS version
		hangUp  bool        // whether the handler aborts the connection
		want    int64
	}{
		{name: "client certificate required, TLS 1.3", cfg: &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert}, trusted: true, max: tls.VersionTLS13, want: 1},
		{name: "client certificate required, TLS 1.2", cfg: &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert}, trusted: true, max: tls.VersionTLS12, want: 1},
		{name: "untrusted server", want: 1},
		{name: "server hangs up", trusted: true, hangUp: true, want: attempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var handshakes atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				if tt.hangUp {
					panic(http.ErrAbortHandler)
				}
			}))
			cfg := tt.cfg
			if cfg == nil {
				cfg = &tls.Config{}
			}
			cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				handshakes.Add(1)
				return nil, nil
			}
			srv.TLS = cfg
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.StartTLS()
			defer srv.Close()

			base := &http.Transport{TLSClientConfig: &tls.Config{MaxVersion: tt.max}}
			if tt.trusted {
				base = srv.Client().Transport.(*http.Transport).Clone()
				base.TLSClientConfig.MaxVersion = tt.max
			}
			defer base.CloseIdleConnections()
			tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(attempts))
			require.NoError(t, err)

			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if resp != nil {
				resp.Body.Close()
			}
			require.Error(t, err)
			require.Equal(t, tt.want, handshakes.Load(), "handshakes for one GET: %v", err)
		})
	}
}

// TestMalformedAddressSentOnce: a port out of range fails the dial before
// anything is sent, and no retry cures it.
func TestMalformedAddressSentOnce(t *testing.T) {
	retries := 0
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := build(t, base, policy.Constant(0).WithMaxAttempts(5),
		retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { retries++ }})))
	_, err := (&http.Client{Transport: tr}).Get("http://127.0.0.1:99999/")
	require.ErrorContains(t, err, "invalid port")
	require.Zero(t, retries)
}
