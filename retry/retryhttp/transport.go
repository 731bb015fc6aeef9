// Package retryhttp retries HTTP requests through an [http.RoundTripper],
// so that a plain http.Client retries correctly with one line:
//
//	client := &http.Client{Transport: retryhttp.New(nil, policy.Default().WithMaxAttempts(4))}
//
// See [Transport] for what is retried and how request bodies and responses
// are handled.
package retryhttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// DefaultMaxRetryAfter bounds a Retry-After when the Transport's policy has
// no cap to clamp it: five minutes, the kubelet's cap.
const DefaultMaxRetryAfter = 5 * time.Minute

// drainLimit bounds how much of a retried response's body is read so that
// its connection can be reused; a longer body is closed unread.
const drainLimit = 64 << 10

// Transport is an http.RoundTripper that retries requests through Base under
// Policy. It is safe for concurrent use once built; do not change its
// fields after first use.
//
// By default it retries connection errors (refused, reset, EOF before a
// response, timeouts) and the statuses 429, 502, 503 and 504, and only for
// requests that are safe to repeat: GET, HEAD, OPTIONS, TRACE, PUT, DELETE,
// or any request that carries an Idempotency-Key header. Retryable replaces
// that classification.
//
// A request body is sent again on each retry through Request.GetBody (set by
// http.NewRequest for in-memory bodies). A request whose body cannot be
// rewound is sent once and not retried: never half-empty.
//
// A retried response's body is drained (up to 64 KiB) and closed, so
// connections are reused and none leak. The final response is returned
// untouched, with a nil error, even when its status would have been retried:
// a RoundTripper that got a response reports it. A Retry-After header, in
// seconds or as an HTTP-date, is honoured as a server hint (retry.After):
// clamped to the policy's cap (or to [DefaultMaxRetryAfter] when the policy
// has none), and ending the call at once, with the
// response, when it would run past the request's deadline. A Retry-After
// that is garbled, negative or in the past falls back to the schedule.
//
// The request's context governs everything: when it is done during a wait,
// RoundTrip returns at once with an error that matches the context's error
// and names the last response's status.
type Transport struct {
	// Base sends each attempt; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Policy says how to wait and when to stop. A policy with a per-attempt
	// timeout is refused: the timeout would cut off the body of the
	// response returned. Use http.Transport's timeouts instead.
	Policy policy.Policy
	// Retryable decides whether to retry after an attempt that returned
	// resp or err (exactly one of them is non-nil); nil means
	// [DefaultRetryable]. It runs on every response, so it must not read
	// the body.
	Retryable func(req *http.Request, resp *http.Response, err error) bool
	// Options are passed to retry.DoValue for every request, for example
	// retry.WithHooks.
	Options []retry.Option
}

// New returns a Transport that sends through base (nil:
// http.DefaultTransport) under p.
func New(base http.RoundTripper, p policy.Policy) *Transport {
	return &Transport{Base: base, Policy: p}
}

var errAttemptTimeout = fmt.Errorf("retryhttp: the policy's per-attempt timeout would cut off response bodies: %w", retry.ErrInvalid)

// statusError is the error of an attempt that got a response to retry.
type statusError struct{ resp *http.Response }

func (e *statusError) Error() string { return "status " + e.resp.Status }

// RoundTrip sends req, retrying as the Transport's doc says.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return base.RoundTrip(req) // the body cannot be sent twice: one attempt
	}
	if t.Policy.AttemptTimeout() > 0 {
		closeBody(req)
		return nil, errAttemptTimeout
	}
	retryable := t.Retryable
	if retryable == nil {
		retryable = DefaultRetryable
	}
	ctx := req.Context()
	attempt := 0
	var held *http.Response // the response of the last attempt, not yet handed back
	resp, err := retry.DoValue(ctx, func(ctx context.Context) (*http.Response, error) {
		attempt++
		r := req
		if attempt > 1 {
			drain(held)
			held = nil
			var err error
			if r, err = withBody(req); err != nil {
				return nil, retry.Permanent(fmt.Errorf("retryhttp: rewinding the request body: %w", err))
			}
		}
		resp, err := base.RoundTrip(r)
		if !retryable(req, resp, err) {
			if err != nil {
				return nil, retry.Permanent(err)
			}
			return resp, nil
		}
		if err != nil {
			return nil, err
		}
		held = resp
		serr := error(&statusError{resp: resp})
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), t.now()); ok {
			if t.Policy.Cap() == 0 {
				d = min(d, DefaultMaxRetryAfter) // no cap to clamp it: never "retrying in 484289h"
			}
			serr = retry.After(d, serr)
		}
		return resp, serr
	}, t.Policy, t.Options...)
	if err == nil {
		return resp, nil
	}
	if attempt == 0 {
		closeBody(req) // no attempt ran: the body is still ours to close
	}
	if held == nil {
		return nil, err
	}
	// The policy ended the call while a retryable response was in hand.
	if ctx.Err() == nil {
		return held, nil // the final response, untouched
	}
	drain(held)
	return nil, fmt.Errorf("retryhttp: %s %s: %w", req.Method, req.URL.Redacted(), err)
}

// CloseIdleConnections closes the idle connections of Base, when it has
// such a method, so that http.Client.CloseIdleConnections reaches it.
func (t *Transport) CloseIdleConnections() {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if c, ok := base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *Transport) now() time.Time {
	if clk := t.Policy.Clock(); clk != nil {
		return clk.Now()
	}
	return time.Now()
}

// withBody returns a shallow copy of req with a fresh body from GetBody.
func withBody(req *http.Request) (*http.Request, error) {
	r := *req
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return &r, nil
}

// DefaultRetryable retries, for requests that are safe to repeat (see
// [Idempotent]), connection errors and the statuses 429 Too Many Requests,
// 502 Bad Gateway, 503 Service Unavailable and 504 Gateway Timeout.
func DefaultRetryable(req *http.Request, resp *http.Response, err error) bool {
	if !Idempotent(req) {
		return false
	}
	if err != nil {
		return ConnectionError(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Idempotent reports whether req is safe to send more than once: its method
// is GET, HEAD, OPTIONS, TRACE, PUT or DELETE (RFC 9110, 9.2.2), or it
// carries an Idempotency-Key header.
func Idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, ok := req.Header["Idempotency-Key"]
	return ok
}

// ConnectionError reports whether err, from sending a request, is a failure
// to connect or to get a response over the connection (refused, reset,
// EOF, network timeouts) rather than a request that can never succeed (a
// bad URL, an untrusted certificate) or the caller's own cancellation.
func ConnectionError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// drain reads a little of resp's body and closes it, so that the connection
// can carry the next request.
func drain(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	_ = resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
