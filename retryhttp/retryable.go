package retryhttp

import (
	"net/http"
	"strings"

	"github.com/retrykit/retrykit/internal/neterr"
)

// DefaultRetryable is the Transport's default classification. It retries a
// connection error, or a 429, 502, 503 or 504 response, of a request that is
// safe to repeat and whose context is not done.
//
// A request is safe to repeat when its method is GET, HEAD, OPTIONS, TRACE,
// PUT or DELETE (RFC 9110, 9.2.2), or when it carries an Idempotency-Key
// header with a value.
//
// A connection error is a failure to reach the server, or to hear back from
// it, that another attempt may not meet: a refused, reset, aborted or broken
// connection, an EOF before the answer, a network timeout (the TLS
// handshake's and the policy's attempt timeout included), a failed DNS lookup,
// or any other failed dial, read or write that the net package reports as a
// [net.OpError].
//
// An error that sending again cannot cure is not one, and its request is sent
// once: a malformed address or an unknown network, a certificate that is
// untrusted, invalid, expired or for another host name, a TLS alert from the
// server. Nor is any other error, such as an unsupported URL scheme, an
// invalid header field or too many redirects, though http.Client reports each
// as a [net.Error]. retrysql, [Handler] and retrygrpc judge network errors by
// the same rule.
func DefaultRetryable(req *http.Request, resp *http.Response, err error) bool {
	if !idempotent(req) {
		return false
	}
	if err != nil {
		// The caller gave up: told by the request's context alone, since
		// the transport's own timeouts match context.DeadlineExceeded too.
		return req.Context().Err() == nil && neterr.Connection(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// idempotent reports whether req is safe to send more than once, by the
// rule of DefaultRetryable.
func idempotent(req *http.Request) bool {
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
