//go:build go1.25

package retryhttp_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// A retried request's log lines through retry.SlogHooks name it by its
// method and its URL, without the URL's password, hedged or not.
func TestSlogHooksNameTheRequest(t *testing.T) {
	zero := policy.Constant(0).WithMaxAttempts(5)
	for _, tt := range []struct {
		name string
		p    policy.Policy
	}{
		{"retried", zero},
		{"hedged", zero.WithHedging(policy.Hedging{Delay: time.Hour})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{closed: make(chan string, 4)}
			s.answer = func(i int, req *http.Request) (*http.Response, error) {
				if i < 3 {
					return s.respond(503, "busy"), nil
				}
				return s.respond(200, "OK"), nil
			}
			var out bytes.Buffer
			hooks := retry.SlogHooks(slog.New(slog.NewJSONHandler(&out, nil)), slog.LevelWarn)
			client := &http.Client{Transport: build(t, s, tt.p, retryhttp.WithRetryOptions(retry.WithHooks(hooks)))}
			resp, err := client.Get("http://user:secret@example.invalid/items?page=2")
			require.NoError(t, err)
			require.Equal(t, "OK", body(t, resp))

			var msgs []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
				msgs = append(msgs, rec["msg"].(string))
				require.Equal(t, "GET", rec["method"], line)
				require.Equal(t, "http://user:xxxxx@example.invalid/items?page=2", rec["url"], line)
			}
			require.Equal(t, []string{"retry: waiting", "retry: waiting", "retry: succeeded"}, msgs)
			require.NotContains(t, out.String(), "secret")
		})
	}
}
