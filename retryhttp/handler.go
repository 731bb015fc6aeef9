package retryhttp

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"

	"github.com/retrykit/retrykit/internal/neterr"
	"github.com/retrykit/retrykit/internal/served"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// The headers of retry at one layer. A server behind [Handler] sends
// pushbackHeader with pushbackValue on a failed answer that a retry would
// only repeat. A Transport sends previousHeader on a request that is a
// retry, or that is made while serving one.
const (
	pushbackHeader = "Retry-Pushback"
	pushbackValue  = "never"
	previousHeader = "Retry-Previous-Attempts"
)

// Handler adds the header "Retry-Pushback: never" to a failed answer of h,
// a final status of 429 or 500 and above, when a retry by the caller would
// meet the same failure. A Transport does not retry such a response. h must
// make its retrykit calls on r.Context(), or a context derived from it.
//
// The answer carries the header when the last retrykit call that failed on
// the request's context ended in one of these ways:
//
//   - Its guard shed it, or denied its retries.
//   - It left its guard with less than one token.
//   - Every attempt of it counted as overload, and so did the last 16 attempts
//     in a row its guard saw.
//   - Its dependency asked it not to retry.
//
// A handler that answers a success, a fallback included, sends no signal.
// docs/layers.md has the exact rule, under "The rule".
//
// Handler also reads the "Retry-Previous-Attempts" header that a Transport
// sends on its retries. While the request is a retry, the retrykit calls h
// makes on its context do not retry their dependency's answers, so the
// attempts of a chain of servers add up rather than multiply.
func Handler(h http.Handler) http.Handler {
	if h == nil {
		h = http.NotFoundHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, s := served.Serve(r.Context(), parsePrevious(r.Header.Get(previousHeader)), neterr.Connection)
		h.ServeHTTP(&pushbackWriter{ResponseWriter: w, s: s}, r.WithContext(ctx))
	})
}

// parsePrevious returns the count of a previous-attempts header. A count
// too large for an int is the largest int, and a garbled one is 0.
func parsePrevious(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0 // strconv.Atoi gives the nearest int for a count out of range
	}
	return n
}

// pushbackWriter adds the pushback header to a failed answer, when the
// request's record says so, as the final status is written.
type pushbackWriter struct {
	http.ResponseWriter
	s     *served.Record
	wrote bool // the final status is written
}

func (w *pushbackWriter) WriteHeader(code int) {
	if informational(code) {
		// Not the answer yet: net/http sends it at once, and the final
		// status follows, as it may for 103 Early Hints.
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if !w.wrote {
		w.wrote = true
		if (code == http.StatusTooManyRequests || code >= 500) && w.s.Pushback() {
			w.Header().Set(pushbackHeader, pushbackValue)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// informational reports whether code is a 1xx status other than 101
// Switching Protocols, which net/http's server writes ahead of the final
// status. 101 is the final status of its connection.
func informational(code int) bool {
	return code >= 100 && code < 200 && code != http.StatusSwitchingProtocols
}

func (w *pushbackWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *pushbackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what is buffered, when the wrapped writer can.
func (w *pushbackWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over, when the wrapped writer can.
func (w *pushbackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// pushedBack reports whether resp asks not to be retried.
func pushedBack(resp *http.Response) bool {
	return resp != nil && resp.Header.Get(pushbackHeader) == pushbackValue
}

// pushbackError is the error of an attempt whose response asked not to be
// retried: it matches retry.ErrPushback.
type pushbackError struct{ err error }

func (e *pushbackError) Error() string {
	return e.err.Error() + " (" + pushbackHeader + ": " + pushbackValue + ")"
}
func (e *pushbackError) Unwrap() []error { return []error{retry.ErrPushback, e.err} }

// withPrevious returns r, or a copy of it with the previous-attempts header
// when the attempt, the nth of its request, is a retry or is made while
// serving one.
func withPrevious(r *http.Request, n int) *http.Request {
	prev := addAttempts(n-1, served.PreviousAttempts(r.Context()))
	if prev <= 0 {
		return r
	}
	c := *r
	c.Header = r.Header.Clone()
	if c.Header == nil {
		c.Header = http.Header{}
	}
	c.Header.Set(previousHeader, strconv.Itoa(prev))
	return &c
}

// addAttempts returns a + b, two counts of attempts that are not negative,
// or the largest int when the sum is larger.
func addAttempts(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// once is the policy of recordFailure: one attempt, no guard.
var once = policy.Constant(0).WithMaxAttempts(1)

// recordFailure ends, through package retry, the call of a request whose
// first attempt failed in a way the Transport does not retry, so that a
// server serving the request's context records it as the call that failed
// last (see Handler), as it records every call that retried.
func recordFailure(req *http.Request, resp *http.Response, err error) {
	if err == nil {
		err = &statusError{status: resp.Status, code: resp.StatusCode, final: true}
	}
	_ = retry.Do(req.Context(), func(context.Context) error { return retry.Permanent(err) }, once)
}
