// Package layers measures retry at one layer: a user's client calls edge,
// which calls mid, which calls leaf, every hop retrying through retryhttp
// under the same policy with a guard of its own. It runs each scenario of
// the issue with the signal on (every server behind retryhttp.Handler),
// with every layer retrying blindly, and with no retries at all, and
// returns the table.
package layers

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// Net starts a server for a handler.
type Net func(http.Handler) *httptest.Server

// Loopback starts servers on loopback TCP ports.
func Loopback(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// InMemory starts servers on an in-memory network, for testing/synctest.
func InMemory(h http.Handler) *httptest.Server { return retrytest.NewServer(h) }

// Mode is how the hops retry.
type Mode int

const (
	// Signal: every hop retries, and every server is behind
	// retryhttp.Handler.
	Signal Mode = iota
	// EveryLayer: every hop retries, and no server signals.
	EveryLayer
	// NoRetry: every hop makes one attempt.
	NoRetry
)

func (m Mode) String() string {
	return [...]string{"one layer (signal)", "every layer retries", "no retry"}[m]
}

// AttemptTimeout is every hop's attempt timeout.
const AttemptTimeout = time.Second

// Policy is every hop's policy: 4 attempts, 10 ms base, doubling, capped at
// 100 ms, full jitter, and the attempt timeout.
func Policy(m Mode) policy.Policy {
	p := policy.Exponential(10 * time.Millisecond).WithCap(100 * time.Millisecond).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxAttempts(4).WithAttemptTimeout(AttemptTimeout)
	if m == NoRetry {
		p = p.WithMaxAttempts(1)
	}
	return p
}

// The leaf's states.
const (
	healthy int32 = iota
	down          // every request is answered 503
	partial       // a third of the requests are answered 503, at random
)

// leaf is the last service. It serves four requests at a time, each for
// its service time, and queues the rest.
type leaf struct {
	state    atomic.Int32
	service  atomic.Int64 // the service time, in nanoseconds
	attempts atomic.Int64
	slots    chan struct{}
}

// serviceTime is the leaf's service time while it is not overloaded.
const serviceTime = time.Millisecond

func newLeaf() *leaf {
	l := &leaf{slots: make(chan struct{}, 4)}
	l.service.Store(int64(serviceTime))
	return l
}

func (l *leaf) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.attempts.Add(1)
	switch l.state.Load() {
	case down:
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	case partial:
		if rand.IntN(3) == 0 {
			http.Error(w, "unlucky", http.StatusServiceUnavailable)
			return
		}
	}
	l.slots <- struct{}{} // the queue: the leaf serves what it took, whether or not its caller still waits
	time.Sleep(time.Duration(l.service.Load()))
	<-l.slots
	_, _ = fmt.Fprint(w, "ok")
}

// gate is the mid's front: while refusing, it drops every connection
// before the request reaches the handler.
type gate struct {
	refusing atomic.Bool
	next     http.Handler
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.refusing.Load() {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = c.Close()
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// forward is the handler of edge and mid: it calls next with the request's
// context, and answers 503 when that fails.
func forward(c *http.Client, next string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, next, nil)
		if err != nil {
			http.Error(w, "bad request", http.StatusInternalServerError)
			return
		}
		resp, err := c.Do(req)
		if err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprint(w, "ok")
	})
}

// chain is client → edge → mid → leaf.
type chain struct {
	user    *http.Client
	url     string
	leaf    *leaf
	gate    *gate
	servers []*httptest.Server
	clients []*http.Client
}

// newChain starts the three servers on net, every hop retrying as m says.
func newChain(net Net, m Mode) (*chain, error) {
	ch := &chain{leaf: newLeaf()}
	leafSrv := ch.start(net, ch.leaf)
	midClient, err := ch.client(net, leafSrv, m)
	if err != nil {
		return nil, err
	}
	ch.gate = &gate{next: wrap(m, forward(midClient, leafSrv.URL))}
	midSrv := ch.start(net, ch.gate)
	edgeClient, err := ch.client(net, midSrv, m)
	if err != nil {
		return nil, err
	}
	edgeSrv := ch.start(net, wrap(m, forward(edgeClient, midSrv.URL)))
	if ch.user, err = ch.client(net, edgeSrv, m); err != nil {
		return nil, err
	}
	ch.url = edgeSrv.URL
	return ch, nil
}

func (ch *chain) start(net Net, h http.Handler) *httptest.Server {
	srv := net(h)
	ch.servers = append(ch.servers, srv)
	return srv
}

// client returns the retrying client of a hop that calls srv, through the
// server's own transport: the in-memory network needs it, and on loopback
// it keeps the chains of a run from sharing one pool.
func (ch *chain) client(net Net, srv *httptest.Server, m Mode) (*http.Client, error) {
	tr, err := retryhttp.New(srv.Client().Transport, Policy(m))
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: tr}
	ch.clients = append(ch.clients, c)
	return c, nil
}

// wrap puts h behind retryhttp.Handler in the Signal mode.
func wrap(m Mode, h http.Handler) http.Handler {
	if m == Signal {
		return retryhttp.Handler(h)
	}
	return h
}

// close stops the servers, the leaf's first, and the clients' idle
// connections.
func (ch *chain) close() {
	for _, c := range ch.clients {
		c.CloseIdleConnections()
	}
	for _, s := range ch.servers {
		s.CloseClientConnections()
		s.Close()
	}
}

// call makes one user request and reports whether it succeeded.
func (ch *chain) call() bool {
	resp, err := ch.user.Get(ch.url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
