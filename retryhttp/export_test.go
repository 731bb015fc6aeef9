package retryhttp

import (
	"net/http"
	"time"
)

// SetDrainTimeout sets the bound on draining a retried body and returns a
// function that restores it.
func SetDrainTimeout(d time.Duration) (restore func()) {
	old := drainTimeout
	drainTimeout = d
	return func() { drainTimeout = old }
}

// Base returns the RoundTripper t sends through.
func Base(t *Transport) http.RoundTripper { return t.base }

// ParseRetryAfter reads a Retry-After header value as the Transport does.
var ParseRetryAfter = parseRetryAfter
