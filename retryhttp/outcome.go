package retryhttp

import (
	"context"
	"net/http"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/classify"
	"github.com/retrykit/retrykit/internal/neterr"
)

// Err returns why the Transport stopped retrying a request whose final
// response resp it would have retried, and nil for every other response. The
// error is a *retry.Error that matches the reason and the last attempt's
// error, such as retry.ErrExhausted when the policy's limits ended the
// retries; docs/calls.md lists the reasons under "How a call ends".
//
// When the request body could not be sent again, Err returns the error of
// the request's GetBody instead, whose message starts with "retryhttp:
// rewinding the request body: ".
//
// Err reads the error from resp.Request, so it keeps working when something
// wraps the body or copies the Response, and returns nil once resp.Request is
// replaced.
func Err(resp *http.Response) error {
	if resp == nil || resp.Request == nil {
		return nil
	}
	n, ok := resp.Request.Context().Value(noteKey{}).(*note)
	if !ok || n.req != resp.Request {
		return nil // the context was handed on to another request
	}
	return n.err
}

// note is the error that ended a call's retries, left on its final
// response's request for [Err].
type note struct {
	req *http.Request // the request it was left on
	err error
}

type noteKey struct{}

// withErr returns resp with err left on it for Err. sent is the request of
// the attempt that got resp, used when the base RoundTripper left
// resp.Request nil.
func withErr(resp *http.Response, sent *http.Request, err error) *http.Response {
	r := resp.Request
	if r == nil {
		r = sent
	}
	n := &note{err: err}
	n.req = r.WithContext(context.WithValue(r.Context(), noteKey{}, n))
	resp.Request = n.req
	return resp
}

// failed reports whether resp says the dependency failed: a 429 or a 5xx.
func failed(resp *http.Response) bool {
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// tell tells the guard, if any, what the dependency did with an attempt
// that failed but that the retry loop does not retry, and so does not
// record itself: a failure whatever the method. admitted says whether the
// guard admitted the attempt as a retry or a hedge. The outcome is the one
// package retry gives the error the loop would have seen, so that a
// request the loop retries and one it does not count alike. An attempt the
// caller gave up on, or one that failed before reaching the dependency (a
// bad URL, an untrusted certificate), is no news.
func (c *call) tell(admitted bool, resp *http.Response, err error) {
	g := admission.Of(c.p)
	if g == nil || c.req.Context().Err() != nil {
		return
	}
	switch {
	case err != nil && !neterr.Connection(err):
	case err != nil:
		g.Record(admitted, classify.Of(err).Outcome)
	case failed(resp):
		g.Record(admitted, classify.Of(c.statusError(resp)).Outcome)
	}
}
