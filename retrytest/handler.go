package retrytest

import (
	"errors"
	"net"
	"net/http"
)

// Handler returns h with in's faults, as server middleware. Each request
// that the plan's Match picks asks in for its fault, as [Injector.Next]
// does, and gets it instead of, or around, h's answer.
//
//   - Latency delays the request, which h then serves.
//   - Status answers with that status, and Retry-After for a Hint,
//     without calling h.
//   - Reset closes the connection without an answer. On TCP it resets the
//     connection, so that the client reads syscall.ECONNRESET.
//   - Stall answers nothing until the request's context ends, because the
//     client gave up, or the injector is closed. Then it closes the
//     connection.
//   - Panic panics: net/http recovers it and drops the connection.
//   - Partial lets h answer and breaks its body after After bytes:
//     Truncate closes the connection there, Reset resets it, Stall holds
//     the body until the request's context ends or the injector is closed,
//     and Latency alone pauses the body, which then goes on.
//
// A server cannot fail a request with an error, so a fault with Err answers
// 500 with a body that says so. With Partial, the body is cut. A nil in or h
// answers 500 too. Over HTTP/2, which cannot hand a connection over, a
// connection that would be closed or reset has only its stream reset.
func (in *Injector) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case in == nil:
			http.Error(w, errNil.Error(), http.StatusInternalServerError)
			return
		case h == nil:
			http.Error(w, "retrytest: nil http.Handler", http.StatusInternalServerError)
			return
		}
		if !in.matches(r) {
			h.ServeHTTP(w, r)
			return
		}
		f, ok := in.Next(r.Context())
		switch {
		case !ok:
			h.ServeHTTP(w, r)
			return
		case f.Partial:
			cw := &cutWriter{ResponseWriter: w, in: in, f: f, r: r, left: f.After}
			h.ServeHTTP(cw, r)
			if !cw.struck {
				cw.strike()
			}
			return
		}
		if err := in.Wait(r.Context(), f); err != nil {
			hangUp(w, false)
			return
		}
		switch {
		case f.Panic != nil:
			panic(f.Panic)
		case f.Status != 0:
			if f.Hint > 0 {
				w.Header().Set("Retry-After", f.retryAfter(in.now()))
			}
			http.Error(w, http.StatusText(f.Status), f.Status)
		case f.Reset:
			hangUp(w, true)
		case f.Err != nil:
			http.Error(w, "retrytest: an HTTP server cannot fail a request with an error; give the fault a Status: "+f.Err.Error(), http.StatusInternalServerError)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// hangUp ends the exchange on w's connection with what was flushed so far,
// resetting a TCP connection when reset is true. Where the connection
// cannot be taken over (HTTP/2), it aborts the handler, which resets the
// stream.
func hangUp(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok && reset {
		_ = tcp.SetLinger(0) // a close that sends RST
	}
	_ = conn.Close()
}

// errCut is what a handler's writes return once a Partial fault has cut
// its connection.
var errCut = errors.New("retrytest: the connection was cut by a fault")

// cutWriter passes a handler's answer through until After bytes of body
// have gone, then strikes its fault.
type cutWriter struct {
	http.ResponseWriter
	in     *Injector
	f      Fault
	r      *http.Request
	left   int  // body bytes still to pass before the fault strikes
	struck bool // the fault has struck
	cut    bool // and the connection is gone
}

// Write passes p through, striking the fault where the body passes After.
func (c *cutWriter) Write(p []byte) (int, error) {
	switch {
	case c.cut:
		return 0, errCut
	case c.struck || len(p) <= c.left:
		n, err := c.ResponseWriter.Write(p)
		c.left -= n
		return n, err
	}
	n, err := c.ResponseWriter.Write(p[:c.left])
	c.left -= n
	if err != nil {
		return n, err
	}
	if c.strike(); c.cut {
		return n, errCut
	}
	m, err := c.ResponseWriter.Write(p[n:])
	return n + m, err
}

// Flush flushes the answer so far, as http.Flusher.
func (c *cutWriter) Flush() {
	if !c.cut {
		_ = http.NewResponseController(c.ResponseWriter).Flush()
	}
}

// Unwrap returns the ResponseWriter beneath, for http.ResponseController.
func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// strike sends the headers and the body so far, waits the fault's Latency
// or Stall, and cuts the connection unless the fault is a pause alone.
func (c *cutWriter) strike() {
	c.struck = true
	_ = http.NewResponseController(c.ResponseWriter).Flush()
	err := c.in.Wait(c.r.Context(), c.f)
	if err == nil && !c.f.Reset && !c.f.Truncate && c.f.Err == nil {
		return // a slow body: it goes on
	}
	c.cut = true
	hangUp(c.ResponseWriter, err == nil && c.f.Reset)
}
