package retryotel

import (
	"net/http"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/retrykit/retrykit/retry"
)

// ResendCount returns a RoundTripper that sets http.request.resend_count on
// the span of every request that retryhttp sends again, then sends the
// request through base. A nil base means http.DefaultTransport.
//
// Put it under otelhttp's Transport, so that the span in the request's
// context is otelhttp's client span, and give that Transport to retryhttp:
//
//	inner := otelhttp.NewTransport(retryotel.ResendCount(nil))
//	tr, err := retryhttp.New(inner, p)
//
// The count is retry.Attempt(req.Context()) less one: 1 on the second
// attempt, 2 on the third, hedges included. A first attempt gets no
// attribute, since OpenTelemetry's HTTP conventions set it only on a request
// sent again. otelhttp does not set the attribute itself. The returned
// RoundTripper is safe for concurrent use when base is.
func ResendCount(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &resendCount{base: base}
}

// resendCount is the RoundTripper that ResendCount returns.
type resendCount struct {
	base http.RoundTripper
}

func (rc *resendCount) RoundTrip(req *http.Request) (*http.Response, error) {
	if n := retry.Attempt(req.Context()); n > 1 {
		trace.SpanFromContext(req.Context()).SetAttributes(semconv.HTTPRequestResendCount(n - 1))
	}
	return rc.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the base, when it has
// such a method. So a client's CloseIdleConnections reaches the base when
// ResendCount is the base of a retryhttp Transport. otelhttp's Transport has
// no such method: through it, the call stops there.
func (rc *resendCount) CloseIdleConnections() {
	if c, ok := rc.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
