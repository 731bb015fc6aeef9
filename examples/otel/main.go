// Command otel shows retryotel at work: a loopback HTTP server that fails
// about half its requests is called through retryhttp with a Recorder's
// hooks, the metrics go to OpenTelemetry's Prometheus exporter, and at the
// end the program scrapes its own /metrics endpoint and prints the retry
// lines, as a dashboard would read them. Last, it makes one call under a
// span and prints the trace: a span for each attempt under the call's, and
// otelhttp's client span under each attempt's, with
// http.request.resend_count from the second attempt on.
//
//	go run ./examples/otel
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retryotel"
)

// script says how the server answers its requests, in turn: F is a 503,
// . a 200. First a flaky spell: some calls succeed at once, some after one
// or two retries. Then an outage: each call gives up after three attempts.
// The program makes one call at a time, and the Transport's guard never
// denies the retries of the only call in flight, so no call is
// throttled. Then the server is back.
const script = "..F.FF.F.." + "FFFFFFFFFFFFFFFFFF" + "......"

// calls is how many calls the program makes.
const calls = 16

func main() {
	log.SetFlags(0)
	// The exporter is a reader of the SDK's meter provider and a collector
	// of the default Prometheus registry, which promhttp.Handler serves;
	// without scope labels, to keep the lines short.
	exporter, err := prometheus.New(prometheus.WithoutScopeInfo())
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	otel.SetMeterProvider(mp)

	srv := httptest.NewServer(mux())
	defer srv.Close()

	// The three lines: one Recorder per dependency, its hooks given to the
	// Transport that calls it.
	rec, err := retryotel.New("inventory")
	if err != nil {
		log.Fatal(err)
	}
	p := policy.Exponential(5 * time.Millisecond).WithCap(20 * time.Millisecond).WithMaxAttempts(3)
	var attempts counter
	tr, err := retryhttp.New(&attempts, p, retryhttp.WithRetryOptions(retry.WithHooks(rec.Hooks())))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}

	fmt.Printf("policy: %v; the server answers %s (F: 503)\n", p, script)
	for i := 1; i <= calls; i++ {
		attempts.n = 0
		resp, err := client.Get(srv.URL + "/stock")
		if err != nil {
			log.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		fmt.Printf("call %2d: %s after %d %s\n", i, resp.Status, attempts.n, plural(attempts.n, "attempt"))
	}

	fmt.Println("\nGET /metrics, the retry lines:")
	if err := scrape(client, srv.URL+"/metrics"); err != nil {
		log.Fatal(err)
	}

	// The same Recorder's hooks trace each attempt of a call made under a
	// span: the tree of one that the server fails twice.
	if err := traceOne(rec, srv.URL+"/traced"); err != nil {
		log.Fatal(err)
	}
}

// counter is the base RoundTripper: it counts the attempts of the call in
// progress (the program makes one at a time).
type counter struct{ n int }

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return http.DefaultTransport.RoundTrip(r)
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// mux serves the flaky /stock, which follows script, /traced, which fails
// its first two requests, and /metrics.
func mux() http.Handler {
	var hits atomic.Int64
	m := http.NewServeMux()
	m.HandleFunc("/stock", func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1) - 1
		if script[n%int64(len(script))] == 'F' {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "42 in stock\n")
	})
	var traced atomic.Int64
	m.HandleFunc("/traced", func(w http.ResponseWriter, r *http.Request) {
		if traced.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "42 in stock\n")
	})
	m.Handle("/metrics", promhttp.Handler())
	return m
}

// scrape prints the lines of the Prometheus text at url whose metric
// starts with retry_, leaving out histogram buckets.
func scrape(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "retry_") && !strings.Contains(line, "_bucket{") {
			fmt.Println(line)
		}
	}
	return sc.Err()
}
