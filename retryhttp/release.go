package retryhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing/iotest"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// drainLimit bounds how much of a retried response's body is read so that
// its connection can be reused; a longer body is closed unread.
const drainLimit = 64 << 10

// drainTimeout bounds how long a retried response's body is read, in real
// time whatever the policy's clock: a server that sends its headers and
// then stalls costs the call at most this long, and its connection is
// dropped. A healthy server's error page arrives in well under it. It is a
// variable for the package's tests only.
var drainTimeout = time.Second

// release drains a retried response's body (at most drainLimit bytes, for
// at most drainTimeout of real time) and closes it, so that its connection
// can carry other requests while the call waits. The bound is real time
// even under a mock clock: a test whose server stalls a body must not hang
// until it thinks of advancing the mock.
func release(resp *http.Response) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	_, _ = drain(resp.Body, io.Discard)
}

// drain copies body to w, at most drainLimit bytes for at most drainTimeout
// of real time, closes it, and reports whether it was read to its end.
func drain(body io.ReadCloser, w io.Writer) (whole bool, err error) {
	// Closing an http response body from another goroutine ends a Read
	// blocked on it: net/http's transports drop the connection.
	timer := time.AfterFunc(drainTimeout, func() { _ = body.Close() })
	n, err := io.CopyN(w, body, drainLimit+1)
	timer.Stop()
	_ = body.Close()
	return err == io.EOF && n <= drainLimit, err
}

// ErrBodyDropped ends the body of a final response that could not be kept in
// memory whole while the request waited for a retry its guard then held
// back. Reading such a body returns its first 64 KiB, or what arrived before
// it stalled, and then ErrBodyDropped.
var ErrBodyDropped = errors.New("retryhttp: the response body was longer than 64 KiB, or stalled, and was dropped while the request waited for its retry")

// keep reads a retryable response's body into memory, so that the response
// can still be the final one after a wait while holding no connection: the
// guard denied the retry, and the call asks again after the wait. A body
// longer than drainLimit, or one that stalls, is cut, and reading past what
// was kept fails with ErrBodyDropped.
func keep(resp *http.Response) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	var buf bytes.Buffer
	whole, _ := drain(resp.Body, &buf)
	if whole {
		resp.Body = io.NopCloser(&buf)
		return
	}
	buf.Truncate(min(buf.Len(), drainLimit))
	resp.Body = io.NopCloser(io.MultiReader(&buf, iotest.ErrReader(ErrBodyDropped)))
}

// stopper is a timer: Stop reports whether it prevented the timer's call.
type stopper interface{ Stop() bool }

// afterFunc calls f in its own goroutine once d has passed on clk, unless
// the returned timer is stopped first. As package retry's attempt timeout,
// it follows clk when clk has a WithTimeout method (benbjohnson/clock's Mock
// does) and the real clock otherwise.
func afterFunc(clk policy.Clock, d time.Duration, f func()) stopper {
	if wt, ok := clk.(interface {
		WithTimeout(context.Context, time.Duration) (context.Context, context.CancelFunc)
	}); ok {
		ctx, cancel := wt.WithTimeout(context.Background(), d)
		return &ctxTimer{stop: context.AfterFunc(ctx, f), cancel: cancel}
	}
	return time.AfterFunc(d, f)
}

// ctxTimer is a timer made of a context that expires on a clock.
type ctxTimer struct {
	stop   func() bool
	cancel context.CancelFunc
}

func (t *ctxTimer) Stop() bool {
	stopped := t.stop()
	t.cancel()
	return stopped
}

// cancelOnClose returns body with a Close that also calls cancel, so that
// an attempt's context lives as long as the body handed back. A body that
// can be written to (a 101 Switching Protocols response) keeps its Write.
func cancelOnClose(body io.ReadCloser, cancel context.CancelFunc) io.ReadCloser {
	if w, ok := body.(io.ReadWriteCloser); ok {
		return &cancelReadWriteCloser{cancelBody{body, cancel}, w}
	}
	return &cancelBody{body, cancel}
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

type cancelReadWriteCloser struct {
	cancelBody
	w io.Writer
}

func (b *cancelReadWriteCloser) Write(p []byte) (int, error) { return b.w.Write(p) }
