package retrytest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
)

// NewServer starts an httptest.Server for h on an in-memory network instead
// of a loopback port, so that it can run inside a testing/synctest bubble. A
// goroutine that waits on a real socket would keep a bubble's time from
// moving. Only the server's Client reaches it, whatever the host of the URL.
// Use that client, or its Transport as the base of one's own. Close the
// server when done, after the injector whose faults stall its requests.
//
// An in-memory connection knows no reset: one that a fault resets is
// closed, and its reader sees io.EOF or io.ErrUnexpectedEOF.
func NewServer(h http.Handler) *httptest.Server {
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	srv.Client().Transport.(*http.Transport).DialContext = l.dial
	return srv
}

// pipeListener hands out the server ends of net.Pipe connections.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// Accept returns the next connection dialled, or net.ErrClosed.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops the listener; dials fail from then on.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr names the in-memory network.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the listener, as http.Transport.DialContext.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		_, _ = server.Close(), client.Close()
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr{}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case <-ctx.Done():
		_, _ = server.Close(), client.Close()
		return nil, ctx.Err()
	}
}

// pipeAddr is the address of the in-memory network.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "retrytest.pipe" }
