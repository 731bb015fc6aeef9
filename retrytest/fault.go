package retrytest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// Fault says what an [Injector] does to one call. The zero Fault does
// nothing: the call goes through as if there were no injector.
//
// A fault has at most one outcome: Err, Panic, Status, Reset, Stall or
// Truncate. Latency comes first, before the outcome. A Latency alone delays
// the call, which then goes through. Not every layer can show every outcome.
// A layer given one it cannot show fails the call with an error that says
// so, and injects nothing else. An HTTP server answers 500 then. What each
// layer does with each field:
//
//	field      plain operation   HTTP client          HTTP server          gRPC (retrygrpctest)
//	Latency    waits             waits                waits                waits
//	Err        returned          RoundTrip's error    — (500)              the call's status
//	Hint       retry.After       Retry-After          Retry-After          grpc-retry-pushback-ms
//	Panic      panics            panics               panics               panics, on the client only
//	Status     —                 a made-up response   the response         —
//	Reset      a reset error     a reset error        the connection       —
//	Stall      blocks            blocks               blocks               blocks
//	Partial    —                 the response body    the response body    a stream's messages
//	Truncate   —                 the body ends early  the body ends early  —
//
// A Fault is a plain value: build one once and put it in any number of
// steps.
type Fault struct {
	// Latency is how long the call waits, on the plan's clock, before the
	// fault strikes. The call's context cuts the wait short, and so does
	// [Injector.Close]. Alone, it delays the call, which then goes through.
	// With Partial, the body pauses, then goes on.
	Latency time.Duration

	// Err is the error the call fails with. For gRPC it should be a status
	// error, made with status.Error. Any other error reaches the caller as
	// codes.Unknown.
	Err error

	// Hint is the server's hint of how long to wait before the next try,
	// sent with Err or Status. A plain operation returns Err marked with
	// retry.After. An HTTP response carries it as Retry-After, in whole
	// seconds rounded up, or as a date with HintDate. A gRPC status carries
	// it in the grpc-retry-pushback-ms trailer. Zero sends no hint.
	Hint time.Duration

	// HintDate sends Hint as an HTTP-date instead of in seconds. The date is
	// the plan's clock's time plus Hint, rounded up to the whole second.
	HintDate bool

	// Panic, when not nil, is the value the call panics with. An HTTP server
	// recovers it and drops the connection. A gRPC server would end the
	// process, so the server interceptors refuse it.
	Panic any

	// Status is the HTTP status the call answers with, from 200 to 599,
	// instead of calling the handler (server side) or the base transport
	// (client side). Its body is the status text.
	Status int

	// Reset resets the connection. Before the response, an HTTP server
	// closes it without answering, and an HTTP client or a plain operation
	// returns an error that matches syscall.ECONNRESET, as a
	// *net.OpError. With Partial, the response body breaks off the same way.
	Reset bool

	// Stall blocks the call until its context ends or the injector is
	// closed. Nothing is answered, so only the caller's own timeouts end
	// it. The call then fails with the context's error or [ErrClosed].
	Stall bool

	// Truncate ends the response body early and cleanly, after After
	// bytes, so that a reader gets io.ErrUnexpectedEOF. It needs Partial.
	Truncate bool

	// Partial moves the fault into the response. The real response goes
	// through up to After, and then the fault strikes. Over HTTP that is
	// the headers and the first After bytes of the body. On a gRPC stream
	// it is the first After messages. A body or stream that ends sooner is
	// struck at its end. From a server, a client that was told the body's
	// length has all of it by then and sees no fault. Through a Transport,
	// the fault strikes all the same, after the last byte. Partial goes
	// with Latency, Reset, Stall, Truncate or Err.
	Partial bool

	// After is how much of the response goes through before a Partial
	// fault strikes: bytes of an HTTP body, messages of a gRPC stream.
	After int
}

// ErrClosed is the error that a call stalled by a fault fails with when
// [Injector.Close] closes the injector.
var ErrClosed = errors.New("retrytest: injector closed")

// errReset is what a reset looks like to the reader of a TCP connection.
func errReset() error {
	return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// zero reports whether f does nothing. Fault is not comparable in general:
// Panic may hold a slice.
func (f Fault) zero() bool {
	return f.Latency == 0 && f.Err == nil && f.Hint == 0 && !f.HintDate && f.Panic == nil &&
		f.Status == 0 && !f.Reset && !f.Stall && !f.Truncate && !f.Partial && f.After == 0
}

// outcomes counts the outcomes f has.
func (f Fault) outcomes() int {
	n := 0
	for _, set := range []bool{f.Err != nil, f.Panic != nil, f.Status != 0, f.Reset, f.Stall, f.Truncate} {
		if set {
			n++
		}
	}
	return n
}

// validate says what is wrong with f, or nil.
func (f Fault) validate() error {
	switch {
	case f.Latency < 0:
		return fmt.Errorf("negative Latency %v", f.Latency)
	case f.Hint < 0:
		return fmt.Errorf("negative Hint %v", f.Hint)
	case f.After < 0:
		return fmt.Errorf("negative After %d", f.After)
	case f.Status != 0 && (f.Status < 200 || f.Status > 599):
		return fmt.Errorf("a Status of %d is not from 200 to 599", f.Status)
	case f.outcomes() > 1:
		return errors.New("more than one of Err, Panic, Status, Reset, Stall and Truncate")
	case f.Hint > 0 && f.Err == nil && f.Status == 0:
		return errors.New("a Hint needs an Err or a Status to go with")
	case f.HintDate && (f.Hint == 0 || f.Status == 0):
		return errors.New("a HintDate needs a Hint and a Status")
	case f.Truncate && !f.Partial:
		return errors.New("a Truncate strikes in the body: it needs Partial")
	case f.After > 0 && !f.Partial:
		return errors.New("an After counts what goes through before a Partial fault: it needs Partial")
	case f.Partial && (f.Panic != nil || f.Status != 0):
		return errors.New("a Partial fault strikes in the real response: it cannot go with Panic or Status")
	case f.Partial && f.outcomes() == 0 && f.Latency == 0:
		return errors.New("a Partial fault with nothing to strike: give it Latency, Reset, Stall, Truncate or Err")
	}
	return nil
}

// retryAfter is the Retry-After value for f's Hint at now.
func (f Fault) retryAfter(now time.Time) string {
	if f.HintDate {
		at := now.Add(f.Hint)
		if t := at.Truncate(time.Second); t.Before(at) {
			at = t.Add(time.Second)
		}
		return at.UTC().Format(http.TimeFormat)
	}
	secs := f.Hint / time.Second
	if f.Hint%time.Second != 0 {
		secs++
	}
	return fmt.Sprint(int64(secs))
}
