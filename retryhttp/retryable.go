package retryhttp

import (
	"net/http"
	"strings"

	"github.com/retrykit/retrykit/internal/neterr"
)

// DefaultRetryable is the Transport's default classification. It retries
// connection errors and the statuses 429 Too Many Requests, 502 Bad
// Gateway, 503 Service Unavailable and 504 Gateway Timeout. It retries only
// requests that are safe to repeat and whose context is not done. A request
// is safe to repeat when its method is GET, HEAD, OPTIONS, TRACE, PUT or
// DELETE (RFC 9110, 9.2.2), or when it carries an Idempotency-Key header
// with a value. An empty key names no operation for the server to
// recognise again, so it does not count.
//
// A connection error is a failure to reach the server over the network or
// to hear back from it, one that another attempt may not meet. A refused,
// reset, aborted or broken connection is one. So are an EOF before the
// answer, a network timeout, and any other failed dial, read or write that
// the net package reports as a [net.OpError]. The timeouts include the TLS
// handshake's and an attempt cut off by the policy's attempt timeout
// (retry.ErrAttemptTimeout). A failed DNS lookup is one too, a host name
// that does not resolve included. A name can appear later, as a new
// instance's does in a cluster, so the policy's limits end a wait for it.
//
// An error that sending again cannot cure is not a connection error, even
// when the network reports it, and a request that meets it is sent once. A
// malformed address or an unknown network ([net.AddrError],
// [net.InvalidAddrError], [net.UnknownNetworkError]) is such an error. So
// are a certificate that is untrusted, invalid, expired or for another host
// name, and a TLS alert from the server, such as its refusal of a client
// without a certificate. Any other error is not a connection error either,
// even when it is a [net.Error]. http.Client wraps every error of a request
// in a *url.Error, which is one. So an unsupported URL scheme, an invalid
// header field and too many redirects are not connection errors. retrysql
// and the server side's wrappers, [Handler] and retrygrpc's interceptors,
// judge network errors by the same rule.
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
