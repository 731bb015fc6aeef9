package retryhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry/retryhttp"
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
