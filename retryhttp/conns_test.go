//go:build go1.25

package retryhttp_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
)

func TestNewNilBaseHasRoomForConcurrentRequests(t *testing.T) {
	a, b := build(t, nil, policy.Default()), build(t, nil, policy.Default())
	base, ok := retryhttp.Base(a).(*http.Transport)
	require.True(t, ok, "New(nil, p) sends through %T", retryhttp.Base(a))
	require.Same(t, base, retryhttp.Base(b), "one pool, shared by every Transport on a nil base")
	def := http.DefaultTransport.(*http.Transport)
	require.NotSame(t, def, base)
	require.Equal(t, 2, http.DefaultMaxIdleConnsPerHost, "what the default transport keeps")
	require.Zero(t, def.MaxIdleConnsPerHost, "the default transport is untouched")
	require.Equal(t, 100, base.MaxIdleConnsPerHost)
	// The rest is the default transport's: proxy from the environment,
	// timeouts, HTTP/2.
	require.Equal(t, def.MaxIdleConns, base.MaxIdleConns)
	require.Equal(t, def.IdleConnTimeout, base.IdleConnTimeout)
	require.Equal(t, def.TLSHandshakeTimeout, base.TLSHandshakeTimeout)
	require.Equal(t, def.ForceAttemptHTTP2, base.ForceAttemptHTTP2)
	require.NotNil(t, base.Proxy)
	require.NotNil(t, base.DialContext)

	// A base given is used as it is.
	own := &http.Transport{}
	require.Same(t, own, retryhttp.Base(build(t, own, policy.Default())))
}

// countingListener counts the connections a server accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// BenchmarkConnections has 64 goroutines send GETs to one loopback server
// through a Transport, and reports the TCP connections that server
// accepted, per request and per second: the connections the client's pool
// could not reuse. The server answers 200, or in the "503" runs 503 to one
// request in four, which the Transport drains and retries at once.
// "DefaultTransport" is what New(nil, p) sent through before it got a pool
// of its own; "GOMAXPROCS+1" is go-retryablehttp's pooled transport's
// per-host idle limit.
func BenchmarkConnections(b *testing.B) {
	bases := []struct {
		name string
		base func() http.RoundTripper // nil: New's own default
	}{
		{"DefaultTransport", func() http.RoundTripper { return http.DefaultTransport }},
		{"GOMAXPROCS+1", func() http.RoundTripper {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxIdleConnsPerHost = runtime.GOMAXPROCS(0) + 1
			return t
		}},
		{"New(nil)", nil},
	}
	for _, every := range []int64{0, 4} {
		name := "200"
		if every > 0 {
			name = "503"
		}
		for _, bc := range bases {
			b.Run(name+"/"+bc.name, func(b *testing.B) {
				var base http.RoundTripper
				if bc.base != nil {
					base = bc.base()
				}
				benchmarkConnections(b, base, every)
			})
		}
	}
}

// benchmarkConnections runs BenchmarkConnections through base; the server
// answers 503 to every n-th request (never when n is 0).
func benchmarkConnections(b *testing.B, base http.RoundTripper, n int64) {
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n > 0 && requests.Add(1)%n == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	lis := &countingListener{Listener: srv.Listener}
	srv.Listener = lis
	srv.Start()
	defer srv.Close()
	tr, err := retryhttp.New(base, policy.Constant(0).WithMaxAttempts(3))
	if err != nil {
		b.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // 64 goroutines
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(srv.URL)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
	b.StopTimer()
	accepted := float64(lis.accepted.Load())
	b.ReportMetric(accepted/float64(b.N), "conns/op")
	b.ReportMetric(accepted/b.Elapsed().Seconds(), "conns/s")
}
