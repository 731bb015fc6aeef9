package retryhttp

import (
	"io"
	"net/http"

	"github.com/retrykit/retrykit/retry"
)

// Err returns why the Transport stopped retrying the request whose final
// response is resp, when it returned a response it would have retried: an
// *retry.Error matching retry.ErrThrottled when the guard held the retries
// back, retry.ErrExhausted when the policy's limits ended them,
// retry.ErrHintTooLong when the server's Retry-After was too long, or
// context.DeadlineExceeded when the next wait would have passed the
// request's deadline. Its Last is the last attempt's error: an attempt cut
// off by the policy's per-attempt timeout matches retry.ErrAttemptTimeout,
// and context.DeadlineExceeded too, as in package retry. It returns nil for any other response: one that was
// not to be retried, or that no Transport returned.
func Err(resp *http.Response) error {
	if resp == nil {
		return nil
	}
	if b, ok := resp.Body.(*errBody); ok {
		return b.err
	}
	return nil
}

// errBody is the body of a final response that the Transport would have
// retried, carrying the error that ended the retries for [Err].
type errBody struct {
	io.ReadCloser
	err error
}

// withErr returns resp with its body carrying err.
func withErr(resp *http.Response, err error) *http.Response {
	resp.Body = &errBody{ReadCloser: resp.Body, err: err}
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
// retry.Classify gives the error the loop would have seen, so that a
// request the loop retries and one it does not count alike. An attempt the
// caller gave up on, or one that failed before reaching the dependency (a
// bad URL, an untrusted certificate), is no news.
func (c *call) tell(admitted bool, resp *http.Response, err error) {
	g := c.p.Guard()
	if g == nil || c.req.Context().Err() != nil {
		return
	}
	switch {
	case err != nil && !retry.ConnectionError(err):
	case err != nil:
		g.Record(admitted, retry.Classify(err).Outcome)
	case failed(resp):
		g.Record(admitted, retry.Classify(c.statusError(resp)).Outcome)
	}
}
