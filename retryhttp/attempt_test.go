//go:build go1.25

package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// numbering is a RoundTripper that records retry.Attempt of every
// request it is given, then sends it on through next.
type numbering struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []int
}

func (n *numbering) RoundTrip(req *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.seen = append(n.seen, retry.Attempt(req.Context()))
	n.mu.Unlock()
	return n.next.RoundTrip(req)
}

func (n *numbering) attempts() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]int(nil), n.seen...)
}

// Every path a request takes through the Transport numbers its attempts
// the same way: the first try made before the loop, the loop making every
// attempt, and the per-attempt timeout's.
func TestAttemptNumbersReachTheBase(t *testing.T) {
	hooks := retry.WithHooks(retry.SlogHooks(slog.New(slog.DiscardHandler), slog.LevelInfo))
	for _, tt := range []struct {
		name string
		p    policy.Policy
		opts []retryhttp.Option
	}{
		{"the first try before the loop", policy.Constant(0).WithMaxAttempts(5), nil},
		{"the loop with hooks", policy.Constant(0).WithMaxAttempts(5), []retryhttp.Option{retryhttp.WithRetryOptions(hooks)}},
		{"an attempt timeout", policy.Constant(0).WithMaxAttempts(5).WithAttemptTimeout(time.Minute), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&flaky{statuses: []int{503, 502, 200}})
			base := srv.Client().Transport.(*http.Transport)
			t.Cleanup(func() {
				base.CloseIdleConnections()
				srv.Close()
			})
			rec := &numbering{next: base}
			client := &http.Client{Transport: build(t, rec, tt.p, tt.opts...)}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, "OK", body(t, resp))
			require.Equal(t, []int{1, 2, 3}, rec.attempts())
		})
	}
}

// A hedge is numbered as the attempt it is, in the order the attempts
// started.
func TestAttemptNumbersOfAHedgedRequest(t *testing.T) {
	s := &scripted{closed: make(chan string, 4)}
	entered := make(chan struct{})
	s.answer = func(i int, req *http.Request) (*http.Response, error) {
		if i == 1 {
			close(entered)
			<-req.Context().Done() // the slow attempt, until the hedge wins
			return nil, req.Context().Err()
		}
		return s.respond(200, "fast"), nil
	}
	rec := &numbering{next: s}
	clk := retrytest.NewClock()
	client := hedgingClient(t, rec, clk, 3)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get("http://example.invalid/")
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	<-entered
	require.Equal(t, time.Second, clk.Step(t), "the hedge delay")
	resp := <-done
	require.NotNil(t, resp)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, []int{1, 2}, rec.attempts())
}

// A request made inside a later attempt of another call numbers its own
// attempts from 1, on every path. A request with no retry of its own is
// sent with the outer attempt's number: it is that attempt.
func TestAttemptNumbersInsideAnotherCall(t *testing.T) {
	hooks := retry.WithHooks(&retry.Hooks{OnRetry: func(context.Context, retry.RetryEvent) {}})
	for _, tt := range []struct {
		name string
		opts []retryhttp.Option
		ctx  func(context.Context) context.Context
		want []int
	}{
		{"the first try before the loop", nil, nil, []int{1, 2}},
		{"the loop with hooks", []retryhttp.Option{retryhttp.WithRetryOptions(hooks)}, nil, []int{1, 2}},
		{"without retry", nil, retryhttp.ContextWithoutRetry, []int{2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{closed: make(chan string, 4)}
			s.answer = func(i int, req *http.Request) (*http.Response, error) {
				if i == 1 {
					return s.respond(503, "busy"), nil
				}
				return s.respond(200, "OK"), nil
			}
			rec := &numbering{next: s}
			client := &http.Client{Transport: build(t, rec, policy.Constant(0).WithMaxAttempts(5), tt.opts...)}
			outer := 0
			err := retry.Do(context.Background(), func(ctx context.Context) error {
				if outer++; outer == 1 {
					return errors.New("the outer call's first attempt fails")
				}
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid/", nil)
				require.NoError(t, err)
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				body(t, resp)
				return nil
			}, policy.Constant(0))
			require.NoError(t, err)
			require.Equal(t, tt.want, rec.attempts())
		})
	}
}
