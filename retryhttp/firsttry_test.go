//go:build go1.25

package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// A GET that succeeds at once allocates what the bare RoundTripper does:
// nothing of the retry loop is set up for it, guarded or not, with a
// deadline or not, with idempotency keys or not.
func TestFirstTryAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are only meaningful without -race and -cover")
	}
	base := &canned{ok: &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody}}
	plain, err := http.NewRequest(http.MethodGet, "http://example.invalid", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	withDeadline := plain.WithContext(ctx)
	p := policy.Constant(0).WithMaxAttempts(3)
	roundTrip := func(rt http.RoundTripper, req *http.Request) func() {
		return func() {
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatal(resp, err)
			}
		}
	}
	for _, tt := range []struct {
		name string
		p    policy.Policy
		opts []retryhttp.Option
		req  *http.Request
	}{
		{"the default guard", p, nil, plain},
		{"no guard", p.WithGuard(admission.Off), nil, plain},
		{"a deadline", p, nil, withDeadline},
		{"idempotency keys on", p, []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, plain},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := retryhttp.New(base, tt.p, tt.opts...)
			require.NoError(t, err)
			bare := testing.AllocsPerRun(1000, roundTrip(base, tt.req))
			require.Equal(t, bare, testing.AllocsPerRun(1000, roundTrip(tr, tt.req)), "allocations per request beyond the bare RoundTripper's")
		})
	}
}

// A first try that succeeds adds the guard's ratio, and one that fails and
// is not retried takes what the loop would have taken.
func TestFirstTryTellsTheGuard(t *testing.T) {
	for _, tt := range []struct {
		name   string
		method string
		status int
		tokens float64
	}{
		{"GET 200", http.MethodGet, 200, 6},
		{"GET 404", http.MethodGet, 404, 6},
		{"POST 503", http.MethodPost, 503, 4.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.status, Status: http.StatusText(tt.status), Body: http.NoBody, Request: req}, nil
			})
			g := policy.NewGuard(10, 1)
			for range 5 {
				protocol(g).Record(true, admit.Failed) // 5 tokens: room for the ratio
			}
			tr := build(t, base, policy.Constant(0).WithMaxAttempts(3).WithGuard(g))
			req, err := http.NewRequest(tt.method, "http://example.invalid", nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, tt.status, resp.StatusCode)
			require.Equal(t, tt.tokens, protocol(g).Tokens())
		})
	}
}

// slow answers 503 to every request: the first after 5s, the others
// after 1s.
func slow() roundTripFunc {
	n := 0
	return func(req *http.Request) (*http.Response, error) {
		if n++; n == 1 {
			time.Sleep(5 * time.Second)
		} else {
			time.Sleep(time.Second)
		}
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Body: http.NoBody, Request: req}, nil
	}
}

// A request whose first attempt failed and was retried tells a time that
// counts from its start, first attempt included, when something times it
// (a deadline, hooks, an attempt timeout, a time limit); a request that
// nothing times tells no time, rather than one that leaves the first
// attempt out.
func TestFirstTryCountsInTheCallsTime(t *testing.T) {
	hooks := retryhttp.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnDone: func(context.Context, retry.DoneEvent) {}}))
	for _, tt := range []struct {
		name     string
		deadline bool
		opts     []retryhttp.Option
		p        policy.Policy
		elapsed  time.Duration
	}{
		{"a deadline", true, nil, policy.Constant(0).WithMaxAttempts(3), 7 * time.Second},
		{"hooks", false, []retryhttp.Option{hooks}, policy.Constant(0).WithMaxAttempts(3), 7 * time.Second},
		{"an attempt timeout", false, nil, policy.Constant(0).WithMaxAttempts(3).WithAttemptTimeout(time.Minute), 7 * time.Second},
		{"a time limit", false, nil, policy.Constant(0).WithMaxAttempts(3).WithMaxElapsed(time.Hour), 7 * time.Second},
		{"nothing times it", false, nil, policy.Constant(0).WithMaxAttempts(3), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := build(t, slow(), tt.p, tt.opts...)
				ctx := context.Background()
				if tt.deadline {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Hour)
					defer cancel()
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid", nil)
				require.NoError(t, err)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				var e *retry.Error
				require.ErrorAs(t, retryhttp.Err(resp), &e)
				require.Equal(t, 3, e.Attempts)
				require.Equal(t, tt.elapsed, e.Elapsed)
				require.Equal(t, tt.elapsed > 0, strings.Contains(e.Error(), " in 7s"), "%v", e)
			})
		})
	}
}

// A request whose context ends during a first attempt that gets a
// response to retry ends as when the loop makes that attempt: the response
// is released, and the error matches the context's and tells of the one
// attempt.
func TestFirstTryThenTheContextEnds(t *testing.T) {
	closed := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	s := &scripted{closed: closed}
	s.answer = func(int, *http.Request) (*http.Response, error) {
		cancel()
		return s.respond(503, "busy"), nil
	}
	tr := build(t, s, policy.Constant(0).WithMaxAttempts(3))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid", nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.Nil(t, resp)
	require.ErrorIs(t, err, context.Canceled)
	var e *retry.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, 1, e.Attempts)
	require.Equal(t, "busy", <-closed, "the response is released")
}
