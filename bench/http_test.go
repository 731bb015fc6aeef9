package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
)

// The HTTP scenarios time one RoundTrip and the reading of its body against
// a loopback server, through the bare http.Transport and through each
// library's RoundTripper wrapped around that same transport. Every library
// may make up to three attempts with zero delay.

// httpServer answers "ok" (busy false), or 503 to every other request and
// "ok" to the rest (busy true), so that each GET is retried exactly once.
func httpServer(busy bool) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1)%2 == 1 && busy {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	return srv, &hits
}

// roundTrippers returns each library's RoundTripper around base, the bare
// transport first.
func roundTrippers(tb testing.TB, base *http.Transport) []struct {
	name string
	rt   http.RoundTripper
} {
	// Without its guard, as the peers have none (admission.Off, which users
	// cannot reach): in the retried scenario every other attempt fails, and
	// a guard rightly stops retrying a dependency in that state after a few
	// requests (then the 503 comes back, and the scenario would measure
	// something else).
	rk, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3).WithGuard(admission.Off))
	if err != nil {
		tb.Fatal(err)
	}
	rh := retryablehttp.NewClient()
	rh.HTTPClient = &http.Client{Transport: base}
	rh.Logger = nil
	rh.RetryMax = 2
	rh.RetryWaitMin, rh.RetryWaitMax = 0, 0
	// failsafehttp leaves a retried response open, holding its connection
	// (the scenario runs out of file descriptors within a second): its users
	// must drain and close it themselves, as here.
	fs := failsafehttp.NewRoundTripper(base, failsafehttp.NewRetryPolicyBuilder().WithDelay(0).WithMaxRetries(2).
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[*http.Response]) {
			if r := e.LastResult(); r != nil {
				_, _ = io.Copy(io.Discard, r.Body)
				_ = r.Body.Close()
			}
		}).Build())
	return []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", base},
		{"retrykit", rk},
		{"retryablehttp", &retryablehttp.RoundTripper{Client: rh}},
		{"failsafehttp", fs},
	}
}

func get(tb testing.TB, rt http.RoundTripper, req *http.Request) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("status %s", resp.Status)
	}
}

func benchmarkHTTP(b *testing.B, busy bool) {
	srv, _ := httpServer(busy)
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range roundTrippers(b, base) {
		if busy && l.name == "bare" {
			// The floor retries by hand: a second RoundTrip after draining
			// and closing the 503.
			l.rt = retryOnce{base}
		}
		lib(b, l.name, func(b *testing.B) {
			for b.Loop() {
				get(b, l.rt, req)
			}
		})
	}
}

// retryOnce is the floor of the retried scenario: the bare transport, and a
// second attempt after a 503 whose body is drained and closed.
type retryOnce struct{ base http.RoundTripper }

func (r retryOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return r.base.RoundTrip(req)
}

// BenchmarkHTTPFirstTry: a GET that succeeds at once.
func BenchmarkHTTPFirstTry(b *testing.B) { benchmarkHTTP(b, false) }

// BenchmarkHTTPRetriedOnce: a GET answered 503, retried at once, then 200.
func BenchmarkHTTPRetriedOnce(b *testing.B) { benchmarkHTTP(b, true) }

// TestHTTPScenariosAgree checks that each RoundTripper makes one attempt in
// the first scenario and two in the second, request after request, as a
// benchmark's many iterations make them.
func TestHTTPScenariosAgree(t *testing.T) {
	for _, busy := range []bool{false, true} {
		srv, hits := httpServer(busy)
		base := srv.Client().Transport.(*http.Transport)
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if busy {
			want = 2
		}
		for _, l := range roundTrippers(t, base) {
			if busy && l.name == "bare" {
				l.rt = retryOnce{base}
			}
			for i := range 50 {
				start := hits.Load()
				get(t, l.rt, req)
				if got := hits.Load() - start; got != want {
					t.Fatalf("busy %v, %s, request %d: %d attempts, want %d", busy, l.name, i+1, got, want)
				}
			}
		}
		base.CloseIdleConnections()
		srv.Close()
	}
}
