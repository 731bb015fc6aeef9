//go:build go1.25

package retryhttp_test

import (
	"context"
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

// numbering is a RoundTripper that records retryhttp.Attempt of every
// request it is given, then sends it on through next.
type numbering struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []int
}

func (n *numbering) RoundTrip(req *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.seen = append(n.seen, retryhttp.Attempt(req.Context()))
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

// A context that no Transport marked is a first attempt's.
func TestAttemptOfAnUnmarkedContext(t *testing.T) {
	require.Equal(t, 1, retryhttp.Attempt(context.Background()))
	//lint:ignore SA1012 a nil context is accepted on purpose
	require.Equal(t, 1, retryhttp.Attempt(nil))
}
