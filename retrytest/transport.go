package retrytest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Transport returns base with in's faults, as an http.RoundTripper for the
// client side. Each request that the plan's Match picks asks in for its
// fault, as [Injector.Next] does, and gets it instead of, or around, base's
// answer. A nil base is http.DefaultTransport.
//
//   - Latency delays the request, which base then sends.
//   - Err is RoundTrip's error, marked with retry.After for a Hint.
//   - Status is a response made up without sending the request, with
//     Retry-After for a Hint and the status text as its body.
//   - Reset is an error that matches syscall.ECONNRESET, as a *net.OpError,
//     without sending the request.
//   - Stall holds RoundTrip until the request's context ends or the
//     injector is closed, and fails it with that error.
//   - Panic panics.
//   - Partial sends the request and breaks the response body after After
//     bytes. With Truncate the body's Read then fails with
//     io.ErrUnexpectedEOF, with Reset with a reset error, and with Err with
//     Err. With Stall it holds until the request's context ends, the body
//     is closed or the injector is. Latency alone pauses the body, which
//     then goes on.
//
// A request that gets a fault instead of base has its body closed, as a
// RoundTripper must. A nil in fails every request with an error that says
// so.
func (in *Injector) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{in: in, base: base}
}

// transport is what Transport returns.
type transport struct {
	in   *Injector
	base http.RoundTripper
}

// RoundTrip sends req through the transport's faults and its base.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := t.in
	if in == nil {
		closeBody(req)
		return nil, errNil
	}
	if !in.matches(req) {
		return t.base.RoundTrip(req)
	}
	f, ok := in.Next(req.Context())
	switch {
	case !ok:
		return t.base.RoundTrip(req)
	case f.Partial:
		resp, err := t.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(req.Context())
		resp.Body = &cutBody{ReadCloser: resp.Body, in: in, f: f, ctx: ctx, cancel: cancel, left: f.After}
		return resp, nil
	}
	if err := in.Wait(req.Context(), f); err != nil {
		closeBody(req)
		return nil, err
	}
	switch {
	case f.Panic != nil:
		closeBody(req)
		panic(f.Panic)
	case f.Status != 0:
		closeBody(req)
		return in.response(req, f), nil
	case f.Err != nil:
		closeBody(req)
		return nil, hinted(f)
	case f.Reset:
		closeBody(req)
		return nil, errReset()
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the base transport,
// for http.Client.CloseIdleConnections.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// response makes up the response of a Status fault.
func (in *Injector) response(req *http.Request, f Fault) *http.Response {
	body := http.StatusText(f.Status) + "\n"
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	if f.Hint > 0 {
		h.Set("Retry-After", f.retryAfter(in.now()))
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", f.Status, http.StatusText(f.Status)),
		StatusCode:    f.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// closeBody closes req's body, as RoundTrip must even when it fails.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// cutBody passes a response body through until After bytes have been read,
// then strikes its fault.
type cutBody struct {
	io.ReadCloser
	in     *Injector
	f      Fault
	ctx    context.Context // the request's, ended by Close too
	cancel context.CancelFunc
	left   int   // bytes still to pass before the fault strikes
	struck bool  // the fault has struck
	err    error // what every Read returns once the fault has broken the body
}

// Read reads the body, striking the fault where it passes After or ends.
func (b *cutBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.struck {
		return b.ReadCloser.Read(p)
	}
	if b.left > 0 {
		n, err := b.ReadCloser.Read(p[:min(len(p), b.left)])
		b.left -= n
		switch {
		case !errors.Is(err, io.EOF):
			return n, err
		case n > 0:
			return n, nil // the next Read strikes at the end
		}
	}
	if err := b.strike(); err != nil {
		return 0, err
	}
	return b.ReadCloser.Read(p)
}

// strike waits the fault's Latency or Stall and breaks the body, unless
// the fault is a pause alone.
func (b *cutBody) strike() error {
	b.struck = true
	switch err := b.in.Wait(b.ctx, b.f); {
	case err != nil:
		b.err = err
	case b.f.Truncate:
		b.err = io.ErrUnexpectedEOF
	case b.f.Reset:
		b.err = errReset()
	case b.f.Err != nil:
		b.err = b.f.Err
	}
	return b.err
}

// Close closes the body, ending a stall in it.
func (b *cutBody) Close() error {
	b.cancel()
	return b.ReadCloser.Close()
}
