package retryhttp

import "context"

// attemptKey is the context key of an attempt's number.
type attemptKey struct{}

// Attempt returns the number of the attempt whose request carries ctx,
// counting the first attempt. A [Transport] puts the number in the context of
// every attempt's request after the first, hedges included, in the order
// the attempts started. It sends no header for it. So the base RoundTripper reads it from the request it
// is given, as Attempt(req.Context()). A context that carries no number
// gives 1, since a request is its own first attempt: that is so for the
// first attempt, and for a request sent without a Transport. A nil ctx
// gives 1 too.
//
// Attempt(ctx)-1 is how many times the request was sent before, the value
// OpenTelemetry's HTTP conventions give http.request.resend_count.
// retryotel.ResendCount sets that attribute from it.
func Attempt(ctx context.Context) int {
	if ctx == nil {
		return 1
	}
	if n, ok := ctx.Value(attemptKey{}).(int); ok {
		return n
	}
	return 1
}

// withAttempt returns ctx marked with n, the number of an attempt after
// the first. The first attempt is left unmarked, so that it costs nothing.
func withAttempt(ctx context.Context, n int) context.Context {
	if n <= 1 {
		return ctx
	}
	return context.WithValue(ctx, attemptKey{}, n)
}
