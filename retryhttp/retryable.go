package retryhttp

import (
	"net/http"
	"strings"

	"github.com/retrykit/retrykit/retry"
)

// DefaultRetryable is the Transport's default classification. It retries
// connection errors and the statuses 429 Too Many Requests, 502 Bad
// Gateway, 503 Service Unavailable and 504 Gateway Timeout. A connection
// error is a failure to reach the server or to hear back from it, such as a
// refused or reset connection or a timeout. An error that no retry cures is
// not one, and a request that meets it is sent once. Such errors include an
// untrusted certificate and a server's refusal of a client without a
// certificate. [retry.ConnectionError] has the full rule.
//
// It retries only requests that are safe to repeat and whose context is not
// done. A request is safe to repeat when its method is GET, HEAD, OPTIONS,
// TRACE, PUT or DELETE (RFC 9110, 9.2.2), or when it carries an
// Idempotency-Key header with a value. An empty key names no operation for
// the server to recognise again, so it does not count.
func DefaultRetryable(req *http.Request, resp *http.Response, err error) bool {
	if !idempotent(req) {
		return false
	}
	if err != nil {
		// The caller gave up: told by the request's context alone, since
		// the transport's own timeouts match context.DeadlineExceeded too.
		return req.Context().Err() == nil && retry.ConnectionError(err)
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
