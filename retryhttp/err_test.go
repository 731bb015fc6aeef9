//go:build go1.25

package retryhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// wrapBody is middleware that wraps every response's body, as http.Client
// does when it has a Timeout.
type wrapBody struct{ next http.RoundTripper }

func (w wrapBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if resp != nil {
		resp.Body = struct{ io.ReadCloser }{resp.Body}
	}
	return resp, err
}

// copyResponse is middleware that hands back a copy of every response.
type copyResponse struct{ next http.RoundTripper }

func (c copyResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if resp == nil {
		return nil, err
	}
	cp := *resp
	return &cp, err
}

// Err tells why the retries of a final response ended, whatever wraps its
// body or copies it on the way to the caller.
func TestErrWhateverWrapsTheResponse(t *testing.T) {
	srv, _, _ := always503(t)
	// Zero delays: the test is of what reaches the caller, not of the waits.
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(3))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	timed := regexp.MustCompile(`^retry: gave up after 3 attempts in [^ :]+: status 503 Service Unavailable$`)
	untimed := regexp.MustCompile(`^retry: gave up after 3 attempts: status 503 Service Unavailable$`)
	for _, tt := range []struct {
		name   string
		client *http.Client
		msg    *regexp.Regexp
	}{
		{"a client without a timeout", &http.Client{Transport: tr}, untimed},
		{"a client with a timeout", &http.Client{Transport: tr, Timeout: 10 * time.Second}, timed},
		{"middleware that wraps the body", &http.Client{Transport: wrapBody{tr}}, untimed},
		{"middleware that copies the response", &http.Client{Transport: copyResponse{tr}}, untimed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, 503, resp.StatusCode)
			require.Equal(t, "Service Unavailable", body(t, resp), "the final response is untouched")
			err = retryhttp.Err(resp)
			require.ErrorIs(t, err, retry.ErrExhausted)
			var e *retry.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, 3, e.Attempts)
			require.Regexp(t, tt.msg, err.Error())
		})
	}
}

// Err is nil for the response of a request made on a final response's
// request context, which it does not follow.
func TestErrStaysWithItsResponse(t *testing.T) {
	srv, _, _ := always503(t)
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(2))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	require.NoError(t, err)
	body(t, resp)
	require.Error(t, retryhttp.Err(resp))

	ok := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ok.Close()
	next, err := http.NewRequestWithContext(resp.Request.Context(), http.MethodGet, ok.URL, nil)
	require.NoError(t, err)
	for _, c := range []*http.Client{ok.Client(), {Transport: tr}} {
		resp2, err := c.Do(next)
		require.NoError(t, err)
		body(t, resp2)
		require.Equal(t, 200, resp2.StatusCode)
		require.NoError(t, retryhttp.Err(resp2))
	}
	ok.Client().CloseIdleConnections()
}

// A response the policy's own predicate refuses to retry is final, as one
// WithClassifier refuses: Err is nil for it, and the guard hears of the
// failure.
func TestErrNilWhenThePolicyRefuses(t *testing.T) {
	never := func(error) bool { return false }
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"retried", policy.Constant(0).WithMaxAttempts(3).WithRetryIf(never)},
		{"hedged", policy.Constant(0).WithMaxAttempts(3).WithRetryIf(never).WithHedging(policy.Hedging{Delay: time.Hour})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, f := always503(t)
			g := policy.NewGuard(10, 1)
			for range 5 {
				protocol(g).Record(true, admit.Failed) // 5 tokens: room either way
			}
			tr, err := retryhttp.New(nil, tt.p.WithGuard(g))
			require.NoError(t, err)
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, 503, resp.StatusCode)
			require.Equal(t, "Service Unavailable", body(t, resp))
			require.NoError(t, retryhttp.Err(resp))
			require.Equal(t, 1, f.count())
			require.Equal(t, 4.5, protocol(g).Tokens(), "a first try that failed fast takes half the ratio")
		})
	}
}

// After a GetBody that fails, Err returns GetBody's error, prefixed, and
// no *retry.Error.
func TestErrAfterAFailedRewind(t *testing.T) {
	srv, _, _ := always503(t)
	tr, err := retryhttp.New(nil, policy.Constant(0).WithMaxAttempts(3))
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	req, errGone := unrewindablePut(t, srv.URL)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	require.Equal(t, "Service Unavailable", body(t, resp))
	err = retryhttp.Err(resp)
	require.ErrorIs(t, err, errGone)
	require.True(t, strings.HasPrefix(err.Error(), "retryhttp: rewinding the request body: "), "%v", err)
	var e *retry.Error
	require.False(t, errors.As(err, &e), "%v", err)
}
