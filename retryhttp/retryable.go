package retryhttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/retrykit/retrykit/retry"
)

// DefaultRetryable retries, for requests that are safe to repeat (see
// [Idempotent]) and whose context is not done, connection errors (see
// [ConnectionError]) and the statuses 429 Too Many Requests, 502 Bad
// Gateway, 503 Service Unavailable and 504 Gateway Timeout.
func DefaultRetryable(req *http.Request, resp *http.Response, err error) bool {
	if !Idempotent(req) {
		return false
	}
	if err != nil {
		// The caller gave up: told by the request's context alone, since
		// the transport's own timeouts match context.DeadlineExceeded too.
		return req.Context().Err() == nil && ConnectionError(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Idempotent reports whether req is safe to send more than once: its method
// is GET, HEAD, OPTIONS, TRACE, PUT or DELETE (RFC 9110, 9.2.2), or it
// carries an Idempotency-Key header with a value. An empty key names no
// operation for the server to recognise again, so it does not count.
func Idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	for _, v := range req.Header.Values("Idempotency-Key") {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// ConnectionError reports whether err, from sending a request, is a failure
// to connect or to get a response over the connection (refused, reset, EOF,
// the transport's timeouts: dial, TLS handshake, response headers, i/o, an
// attempt cut off by the per-attempt timeout) rather than a request that can
// never succeed (a bad URL, an untrusted certificate). It does not tell
// whether the caller gave up: a request whose context is done fails with an
// error that may look like a timeout, which [DefaultRetryable] rules out by
// looking at the request's context.
func ConnectionError(err error) bool {
	if errors.Is(err, retry.ErrAttemptTimeout) {
		return true
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}
