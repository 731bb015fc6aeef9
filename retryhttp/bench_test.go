//go:build go1.25

package retryhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
)

func benchmarkGet(b *testing.B, wrap func(http.RoundTripper) http.RoundTripper) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	rt := wrap(base)
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// BenchmarkGetBare and BenchmarkGetRetrying compare a GET that succeeds at
// once through the bare transport and through the retrying one.
func BenchmarkGetBare(b *testing.B) {
	benchmarkGet(b, func(rt http.RoundTripper) http.RoundTripper { return rt })
}

func BenchmarkGetRetrying(b *testing.B) {
	p := policy.Default().WithMaxAttempts(4)
	benchmarkGet(b, func(rt http.RoundTripper) http.RoundTripper {
		tr, err := retryhttp.New(rt, p)
		if err != nil {
			b.Fatal(err)
		}
		return tr
	})
}

// canned is a RoundTripper that answers at once from memory, so that a
// benchmark through it times the retrying Transport's own work.
type canned struct {
	busy bool // answer 503 to every other request
	n    int
	ok   *http.Response
}

func (c *canned) RoundTrip(*http.Request) (*http.Response, error) {
	c.n++
	if c.busy && c.n%2 == 1 {
		return &http.Response{Status: "503 Service Unavailable", StatusCode: 503, Body: http.NoBody}, nil
	}
	return c.ok, nil
}

func benchmarkOverhead(b *testing.B, busy bool, wrap bool) {
	base := &canned{busy: busy, ok: &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody}}
	var rt http.RoundTripper = base
	if wrap {
		tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3))
		if err != nil {
			b.Fatal(err)
		}
		rt = tr
	}
	req, err := http.NewRequest(http.MethodGet, "http://example.invalid", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkOverheadFirstTry and BenchmarkOverheadRetriedOnce time what the
// Transport adds to a RoundTripper that costs next to nothing: its own work
// per request, to set beside a real request's tens of microseconds.
func BenchmarkOverheadFirstTry(b *testing.B) {
	b.Run("base", func(b *testing.B) { benchmarkOverhead(b, false, false) })
	b.Run("retryhttp", func(b *testing.B) { benchmarkOverhead(b, false, true) })
}

func BenchmarkOverheadRetriedOnce(b *testing.B) {
	b.Run("retryhttp", func(b *testing.B) { benchmarkOverhead(b, true, true) })
}

// BenchmarkOverheadOverride sets a first-try success under the Transport's
// own policy beside one under a policy of the request's context
// (ContextWithPolicy), given again on every request.
func BenchmarkOverheadOverride(b *testing.B) {
	base := &canned{ok: &http.Response{Status: "200 OK", StatusCode: 200, Body: http.NoBody}}
	tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := http.NewRequest(http.MethodGet, "http://example.invalid", nil)
	if err != nil {
		b.Fatal(err)
	}
	override := plain.WithContext(retryhttp.ContextWithPolicy(plain.Context(), policy.Constant(0).WithMaxAttempts(4)))
	for _, bm := range []struct {
		name string
		req  *http.Request
	}{{"own", plain}, {"override", override}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(bm.req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
			}
		})
	}
}
