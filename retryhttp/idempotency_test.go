//go:build go1.25

package retryhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// uuid4 is the form of the keys WithIdempotencyKeys makes.
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// keyLog is a handler that records the Idempotency-Key of every request and
// answers the statuses of codes in turn, the last one repeating.
type keyLog struct {
	codes []int
	mu    sync.Mutex
	keys  []string
}

func (l *keyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	l.mu.Lock()
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	code := l.codes[min(len(l.keys), len(l.codes))-1]
	l.mu.Unlock()
	w.WriteHeader(code)
}

func (l *keyLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...)
}

func TestIdempotencyKeys(t *testing.T) {
	for _, tt := range []struct {
		name     string
		method   string
		key      string // the caller's own key
		opts     []retryhttp.Option
		attempts int
		minted   bool // the Transport made the key
	}{
		{"a POST gets a key and is retried", http.MethodPost, "", []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, 3, true},
		{"a PATCH gets a key and is retried", http.MethodPatch, "", []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, 3, true},
		{"the caller's key is kept", http.MethodPost, "order-42", []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, 3, false},
		{"an empty key is replaced", http.MethodPost, " ", []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, 3, true},
		{"a GET gets none", http.MethodGet, "", []retryhttp.Option{retryhttp.WithIdempotencyKeys()}, 3, false},
		{"without the option a POST gets none and is sent once", http.MethodPost, "", nil, 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &keyLog{codes: []int{503, 503, 200}}
			srv := httptest.NewServer(log)
			defer srv.Close()
			tr := build(t, srv.Client().Transport, policy.Constant(0).WithMaxAttempts(3), tt.opts...)
			req, err := http.NewRequest(tt.method, srv.URL, strings.NewReader("charge 10 EUR"))
			require.NoError(t, err)
			if tt.key != "" {
				req.Header.Set("Idempotency-Key", tt.key)
			}
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			keys := log.seen()
			require.Len(t, keys, tt.attempts)
			for _, k := range keys {
				require.Equal(t, keys[0], k, "the same key on every attempt")
			}
			switch {
			case tt.minted:
				require.Regexp(t, uuid4, keys[0])
			case tt.key != "":
				require.Equal(t, tt.key, keys[0])
			default:
				require.Empty(t, keys[0])
			}
			require.Equal(t, tt.key, req.Header.Get("Idempotency-Key"), "the caller's request is not changed")
		})
	}
}

// Every request gets a key of its own.
func TestIdempotencyKeysNewForEveryRequest(t *testing.T) {
	log := &keyLog{codes: []int{201}}
	srv := httptest.NewServer(log)
	defer srv.Close()
	tr := build(t, srv.Client().Transport, policy.Constant(0).WithMaxAttempts(3), retryhttp.WithIdempotencyKeys())
	const requests = 20
	for range requests {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	seen := map[string]bool{}
	for _, k := range log.seen() {
		require.Regexp(t, uuid4, k)
		seen[k] = true
	}
	require.Len(t, seen, requests, "one key per request")
}

// A hedge carries the key of the attempt it runs beside.
func TestIdempotencyKeysOnHedges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var keys []string
		srv := retrytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			keys = append(keys, r.Header.Get("Idempotency-Key"))
			n := len(keys)
			mu.Unlock()
			if n == 1 {
				select { // slow to answer: the hedge wins
				case <-time.After(time.Minute):
				case <-r.Context().Done():
				}
			}
			w.WriteHeader(201)
		}))
		defer srv.Close()
		p := policy.Constant(0).WithMaxAttempts(3).WithHedging(policy.Hedging{Delay: time.Second})
		tr := build(t, srv.Client().Transport, p, retryhttp.WithIdempotencyKeys())
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.Equal(t, 201, resp.StatusCode)
		require.NoError(t, resp.Body.Close())
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, keys, 2, "the first attempt and its hedge")
		require.Regexp(t, uuid4, keys[0])
		require.Equal(t, keys[0], keys[1])
	})
}

// ledger is a server that deduplicates writes by Idempotency-Key: the first
// request with a key commits the write and then fails as fail says, as if
// its response were lost; a request with a key it has seen gets the answer
// of the committed write, and commits nothing.
type ledger struct {
	fail   func(w http.ResponseWriter)
	mu     sync.Mutex
	writes int               // writes committed
	calls  int               // requests served
	done   map[string]string // key: the id of the write it committed
}

func (l *ledger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Idempotency-Key")
	l.mu.Lock()
	l.calls++
	id, seen := l.done[key]
	if !seen {
		l.writes++
		id = "write-" + string(rune('0'+l.writes))
		if key != "" {
			l.done[key] = id
		}
	}
	l.mu.Unlock()
	if !seen {
		l.fail(w) // committed, and yet the client hears of a failure
		return
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, id)
}

func TestIdempotencyKeysWriteOnce(t *testing.T) {
	unavailable := func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }
	dropped := func(w http.ResponseWriter) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close() // no response at all
		}
	}
	for _, tt := range []struct {
		name string
		fail func(http.ResponseWriter)
	}{
		{"503 after the commit", unavailable},
		{"the connection dropped after the commit", dropped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{fail: tt.fail, done: map[string]string{}}
			srv := httptest.NewServer(l)
			defer srv.Close()
			tr := build(t, srv.Client().Transport, policy.Constant(0).WithMaxAttempts(3), retryhttp.WithIdempotencyKeys())
			req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("charge 10 EUR"))
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, resp.StatusCode, "the answer from the server's record")
			require.Equal(t, "write-1", body(t, resp))
			l.mu.Lock()
			defer l.mu.Unlock()
			require.Equal(t, 1, l.writes, "the write is made once")
			require.GreaterOrEqual(t, l.calls, 2, "and was sent again")
		})
	}
}
