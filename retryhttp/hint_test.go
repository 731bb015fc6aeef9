//go:build go1.25

package retryhttp_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/clocktest"
	"github.com/retrykit/retrykit/policy"
)

func TestRetryAfterHonouredAsGivenAboveTheCap(t *testing.T) {
	clk := clocktest.NewCounted()
	f := &flaky{statuses: []int{503, 200}, header: http.Header{"Retry-After": {"400"}}}
	p := policy.Default().WithCap(time.Minute).WithMaxHint(10 * time.Minute).WithClock(clk)
	srv, client := serveWith(t, f, p)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	require.Equal(t, 400*time.Second, clk.Step(t), "the server's 400s, not cut to the 1m cap")
	resp := <-done
	require.Equal(t, 200, resp.StatusCode)
	body(t, resp)
}

func TestRetryAfterPastTheHintCeilingReturnsTheResponse(t *testing.T) {
	for _, tt := range []struct {
		header string
		p      policy.Policy
	}{
		{"600", policy.Default()},                     // the default ceiling, five minutes
		{"99999999", policy.Exponential(time.Second)}, // no cap: no three-year wait either
		{"61", policy.Constant(time.Second).WithMaxHint(time.Minute)},
	} {
		t.Run(tt.header, func(t *testing.T) {
			clk := clocktest.NewCounted()
			srv, _ := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.header)
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, hugeBody)
			}))
			base := srv.Client().Transport.(*http.Transport)
			t.Cleanup(base.CloseIdleConnections)
			client := &http.Client{Transport: build(t, base, tt.p.WithClock(clk))}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, 503, resp.StatusCode, "the server's answer, at once")
			require.Equal(t, tt.header, resp.Header.Get("Retry-After"))
			require.Equal(t, hugeBody, body(t, resp), "untouched")
			require.Zero(t, clk.Waits())
		})
	}
}
