//go:build go1.25

package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// unavailable is a server that answers 503 to every request and counts them.
func unavailable(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestPerRequestPolicy(t *testing.T) {
	attempts := func(n int) func(context.Context) context.Context {
		return func(ctx context.Context) context.Context {
			return retryhttp.ContextWithPolicy(ctx, policy.Constant(0).WithMaxAttempts(n))
		}
	}
	for _, tt := range []struct {
		name     string
		ctx      []func(context.Context) context.Context // applied in turn: the last is the closest to the request
		attempts int32
	}{
		{"the Transport's own policy", nil, 2},
		{"an override", []func(context.Context) context.Context{attempts(4)}, 4},
		{"no retry", []func(context.Context) context.Context{retryhttp.ContextWithoutRetry}, 1},
		{"an override of an override", []func(context.Context) context.Context{attempts(4), attempts(3)}, 3},
		{"no retry over an override", []func(context.Context) context.Context{attempts(4), retryhttp.ContextWithoutRetry}, 1},
		{"an override over no retry", []func(context.Context) context.Context{retryhttp.ContextWithoutRetry, attempts(3)}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := unavailable(t)
			tr := build(t, srv.Client().Transport, policy.Constant(0).WithMaxAttempts(2))
			ctx := t.Context()
			for _, f := range tt.ctx {
				ctx = f(ctx)
			}
			// A value of another key in between: the override is still found.
			ctx = context.WithValue(ctx, struct{ other int }{}, 1)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the final response")
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tt.attempts, n.Load(), "attempts")
			if tt.attempts > 1 {
				require.ErrorIs(t, retryhttp.Err(resp), retry.ErrExhausted)
			} else {
				require.NoError(t, retryhttp.Err(resp), "a response no Transport retried")
			}
		})
	}
}

// An invalid policy in the request's context is an error that says so,
// and nothing is sent.
func TestPerRequestPolicyInvalid(t *testing.T) {
	srv, n := unavailable(t)
	tr := build(t, srv.Client().Transport, policy.Constant(0).WithMaxAttempts(2))
	closed := make(chan string, 1)
	b := &trackedBody{Reader: strings.NewReader("x"), name: "body", closed: closed}
	ctx := retryhttp.ContextWithPolicy(t.Context(), policy.Constant(-1))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, b)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.Nil(t, resp)
	require.ErrorIs(t, err, policy.ErrInvalid)
	require.ErrorContains(t, err, "retryhttp: PUT "+srv.URL+": the policy of the request's context (ContextWithPolicy) is unusable: ")
	require.Zero(t, n.Load(), "nothing is sent")
	require.Equal(t, "body", <-closed, "the body is closed, as on every error")
}

// An override keeps the rest of the Transport: its options, its keys and
// its guard, unless the policy brings a guard of its own. ContextWithoutRetry
// sends the request as it is, through the base alone.
func TestPerRequestPolicyKeepsTheTransport(t *testing.T) {
	var keys []string
	var hooked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	own, other := policy.NewGuard(10, 1), policy.NewGuard(10, 1)
	hooks := retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) { hooked.Add(1) }}))
	tr, err := retryhttp.New(srv.Client().Transport, policy.Constant(0).WithMaxAttempts(2).WithGuard(own),
		retryhttp.WithIdempotencyKeys(), hooks)
	require.NoError(t, err)
	send := func(ctx context.Context) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}

	send(retryhttp.ContextWithPolicy(t.Context(), policy.Constant(0).WithMaxAttempts(3)))
	require.Len(t, keys, 3)
	require.Regexp(t, uuid4, keys[0])
	require.Equal(t, []string{keys[0], keys[0], keys[0]}, keys, "one key for every attempt")
	require.Equal(t, int32(2), hooked.Load(), "the Transport's hooks hear the retries")
	require.Less(t, protocol(own).Tokens(), 10.0, "the Transport's guard hears the failures")

	ownTokens := protocol(own).Tokens()
	send(retryhttp.ContextWithPolicy(t.Context(), policy.Constant(0).WithMaxAttempts(2).WithGuard(other)))
	require.Less(t, protocol(other).Tokens(), 10.0, "the policy's guard hears the failures")
	require.Equal(t, ownTokens, protocol(own).Tokens(), "in place of the Transport's")

	keys = nil
	send(retryhttp.ContextWithoutRetry(t.Context()))
	require.Equal(t, []string{""}, keys, "one attempt, as the caller made it")
	require.Equal(t, ownTokens, protocol(own).Tokens(), "the guard hears nothing of it")
}

// A zero Transport takes an override too.
func TestPerRequestPolicyZeroTransport(t *testing.T) {
	srv, n := unavailable(t)
	prev := http.DefaultTransport
	http.DefaultTransport = srv.Client().Transport
	defer func() { http.DefaultTransport = prev }()
	var tr retryhttp.Transport
	req, err := http.NewRequestWithContext(retryhttp.ContextWithPolicy(t.Context(), policy.Constant(0).WithMaxAttempts(3)), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, int32(3), n.Load())
	var e *retry.Error
	require.True(t, errors.As(retryhttp.Err(resp), &e))
	require.Equal(t, 3, e.Attempts)
}

// A request whose context carries a policy allocates what a request does
// through a Transport built with that policy, whether the request's context
// is reused or made anew with ContextWithPolicy. ContextWithoutRetry allocates what the
// base alone does.
func TestPerRequestPolicyAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	base := &canned{ok: &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody}}
	tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3))
	require.NoError(t, err)
	plainReq, err := http.NewRequest(http.MethodGet, "http://example.invalid", nil)
	require.NoError(t, err)
	allocs := func(rt http.RoundTripper, req func() *http.Request) float64 {
		return testing.AllocsPerRun(1000, func() {
			resp, err := rt.RoundTrip(req())
			if err != nil || resp.StatusCode != 200 {
				t.Fatal(resp, err)
			}
		})
	}
	plain := func() *http.Request { return plainReq }
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"an attempt limit", policy.Constant(0).WithMaxAttempts(4)},
		{"no limit, bounded to 5 attempts", policy.Constant(0)},
		{"a guard of its own", policy.Constant(0).WithMaxAttempts(4).WithGuard(policy.NewGuard(10, 1))},
		{"an attempt timeout, which the loop times", policy.Constant(0).WithMaxAttempts(4).WithAttemptTimeout(time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			like, err := retryhttp.New(base, tt.p)
			require.NoError(t, err)
			want := allocs(like, plain)
			reused := plainReq.WithContext(retryhttp.ContextWithPolicy(context.Background(), tt.p))
			require.Equal(t, want, allocs(tr, func() *http.Request { return reused }), "a reused context")
			fresh := func() *http.Request {
				return plainReq.WithContext(retryhttp.ContextWithPolicy(context.Background(), tt.p))
			}
			making := allocs(base, fresh) - allocs(base, plain) // what the caller allocates to make the request
			require.Equal(t, want+making, allocs(tr, fresh), "a context made anew")
		})
	}
	t.Run("no retry", func(t *testing.T) {
		req := plainReq.WithContext(retryhttp.ContextWithoutRetry(context.Background()))
		require.Equal(t, allocs(base, plain), allocs(tr, func() *http.Request { return req }))
	})
}

// A Transport keeps what it derives for 8 policies of requests' contexts:
// requests under 8 policies in turn allocate nothing for them, and a ninth
// policy takes the place of the first, so that the Transport holds no more.
func TestPerRequestPolicyAllocationsSeveralPolicies(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	base := &canned{ok: &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody}}
	plainReq, err := http.NewRequest(http.MethodGet, "http://example.invalid", nil)
	require.NoError(t, err)
	for _, tt := range []struct {
		policies int
		free     bool
	}{{1, true}, {8, true}, {9, false}} {
		t.Run(strconv.Itoa(tt.policies), func(t *testing.T) {
			tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3))
			require.NoError(t, err)
			var reqs []*http.Request
			for i := range tt.policies {
				p := policy.Constant(0).WithMaxAttempts(4 + i)
				reqs = append(reqs, plainReq.WithContext(retryhttp.ContextWithPolicy(context.Background(), p)))
			}
			inTurn := func(rt http.RoundTripper, reqs []*http.Request) float64 {
				return testing.AllocsPerRun(100, func() {
					for _, req := range reqs {
						resp, err := rt.RoundTrip(req)
						if err != nil || resp.StatusCode != 200 {
							t.Fatal(resp, err)
						}
					}
				})
			}
			bare := inTurn(base, reqs)
			if tt.free {
				require.Equal(t, bare, inTurn(tr, reqs))
			} else {
				require.Greater(t, inTurn(tr, reqs), bare)
			}
		})
	}
}

// A zero Transport sends a request under a policy of its context through
// http.DefaultTransport as it is when the request is sent, even under a
// policy it was given before.
func TestPerRequestPolicyZeroTransportFollowsTheDefault(t *testing.T) {
	prev := http.DefaultTransport
	defer func() { http.DefaultTransport = prev }()
	var first, second atomic.Int32
	answer := func(n *atomic.Int32) roundTripFunc {
		return func(req *http.Request) (*http.Response, error) {
			n.Add(1)
			return &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody, Request: req}, nil
		}
	}
	var tr retryhttp.Transport
	req, err := http.NewRequestWithContext(retryhttp.ContextWithPolicy(t.Context(), policy.Constant(0).WithMaxAttempts(3)), http.MethodGet, "http://example.invalid", nil)
	require.NoError(t, err)
	for _, n := range []*atomic.Int32{&first, &second} {
		http.DefaultTransport = answer(n)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
	}
	require.Equal(t, int32(1), first.Load())
	require.Equal(t, int32(1), second.Load(), "the default as it is now")
}
