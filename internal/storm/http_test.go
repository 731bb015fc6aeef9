//go:build go1.25

package storm_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/storm"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
)

type attemptKey struct{}

// simulated is a RoundTripper in front of the scenario's server: each
// request is one attempt, which the server answers 200, or 503 when the
// attempt failed, unless the attempt's context (the Transport's attempt
// timeout) ended first.
type simulated struct{}

func (simulated) RoundTrip(req *http.Request) (*http.Response, error) {
	attempt := req.Context().Value(attemptKey{}).(func(context.Context) error)
	err := attempt(req.Context())
	switch {
	case err == nil:
		return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: req}, nil
	case req.Context().Err() != nil:
		return nil, err
	case isTimeout(err): // a rate limit's refusal
		return &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Body: io.NopCloser(strings.NewReader("slow down")), Header: http.Header{}, Request: req}, nil
	default:
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Body: io.NopCloser(strings.NewReader("busy")), Header: http.Header{}, Request: req}, nil
	}
}

// isTimeout reports whether err reports a timeout, as a rate limit's
// refusal does in the scenarios.
func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

// throughTransport runs s with every call a GET through one
// retryhttp.Transport built from p and opts.
func throughTransport(t *testing.T, s storm.Scenario, p policy.Policy, opts ...retryhttp.Option) storm.Result {
	t.Helper()
	var r storm.Result
	synctest.Test(t, func(t *testing.T) {
		tr, err := retryhttp.New(simulated{}, p, opts...)
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		r = storm.RunRealThrough(s, func(i int, attempt func(context.Context) error) bool {
			ctx := context.WithValue(context.Background(), attemptKey{}, attempt)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://dependency.test/", nil)
			if err != nil {
				return false
			}
			resp, err := client.Do(req)
			if err != nil {
				return false // an attempt that timed out, with no retry to follow
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	})
	return r
}

// TestStressStormTransportGuardedByDefault runs the storm scenario through
// retryhttp's Transport as a service would adopt it, retryhttp.New with the
// scenario's policy and nothing else, beside the same Transport with
// retries off: the Transport's own guard recovers from the stall as fast.
func TestStressStormTransportGuardedByDefault(t *testing.T) {
	if raceEnabled {
		t.Skip("32,000 calls through net/http twice: run without -race (CI's Stress step)")
	}
	noRetry := throughTransport(t, storm.Storm(), storm.Retrying().WithMaxAttempts(1))
	base, ok := noRetry.Recovered(stallEnd, 0.95)
	require.True(t, ok, "the client that never retries recovers")

	guarded := throughTransport(t, storm.Storm(), storm.Retrying())
	after, ok := guarded.Recovered(stallEnd, 0.95)
	require.True(t, ok, "the default Transport never recovers: %v", guarded.Goodput)
	t.Logf("Transport: no retry recovered %v after the stall; default guard %v, %.2f%% success, %.4f attempts per call",
		base, after, 100*guarded.Success(), guarded.Amplification())
	require.LessOrEqual(t, after, base+time.Second, "recovery beside the client that never retries")

	sporadic := throughTransport(t, storm.Sporadic(), storm.Retrying())
	t.Logf("Transport, sporadic 10%% failures: %.3f%% success", 100*sporadic.Success())
	require.GreaterOrEqual(t, sporadic.Success(), 0.999)
}

// TestStressStormTransportWithoutGuardStorms shows that the guard is what
// holds: the same Transport with its guard turned off never recovers.
func TestStressStormTransportWithoutGuardStorms(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("plain retries through net/http: the heaviest run; without -race only")
	}
	plain := throughTransport(t, storm.Storm(), storm.Retrying().WithGuard(admission.Off))
	_, ok := plain.Recovered(stallEnd, 0.95)
	require.False(t, ok, "without its guard the Transport recovers, so the scenario is no storm")
}

// TestStressFleetsThatWaitThroughTheTransport runs the fleets whose callers
// would wait a minute through the default Transport, retryhttp.New with the
// fleet's policy and nothing else: through a rate limit's prompt 429s and
// through a stall, at least 99.5 % get through. Before the guard held new
// calls back by waiting, the rate limit got 1.6 % through.
func TestStressFleetsThatWaitThroughTheTransport(t *testing.T) {
	if raceEnabled {
		t.Skip("2,000 calls through net/http: run without -race (CI's Stress step)")
	}
	for _, s := range []storm.Scenario{storm.FleetLimit(), storm.FleetStall()} {
		r := throughTransport(t, s, s.Policy())
		t.Logf("%s through the Transport: %.1f%%, p99 %v after the trouble", s.Name, 100*r.Success(), r.EndQuantile(0.99, storm.FleetDown))
		require.GreaterOrEqual(t, r.Success(), 0.995, s.Name)
	}
}
