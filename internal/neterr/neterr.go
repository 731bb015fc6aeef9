// Package neterr tells the network failures that another attempt may cure
// from those it cannot. retryhttp, retrysql and retrygrpc share it, so that
// package retry, which every program that retries compiles, imports neither
// net nor crypto.
package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/retrykit/retrykit/retry"
)

// Connection reports whether err is a failure to reach a dependency over
// the network or to hear back from it, one that another attempt may not
// meet. The rule in full is in the doc of retryhttp.DefaultRetryable, the
// public name that applies it. An attempt cut off by the policy's attempt
// timeout (retry.ErrAttemptTimeout) is one.
//
// It does not tell whether the caller gave up. A call whose context is done
// fails with an error that may look like a timeout, so look at the context
// as well before retrying.
func Connection(err error) bool {
	return errors.Is(err, retry.ErrAttemptTimeout) || networkFailure(err)
}

// networkFailure is Connection without the loop's own attempt timeout.
// go-retryablehttp retries any error that it does not list as hopeless;
// this names what is retried instead, since *url.Error makes every error
// of http.Client a net.Error.
func networkFailure(err error) bool {
	var (
		addr      *net.AddrError
		invalid   net.InvalidAddrError
		network   net.UnknownNetworkError
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		cert      x509.CertificateInvalidError
		alert     tls.AlertError
		op        *net.OpError
		dns       *net.DNSError
		netErr    net.Error
	)
	switch {
	// A dialer may wrap any of these in a *net.OpError, so they come first.
	case errors.As(err, &addr), errors.As(err, &invalid), errors.As(err, &network),
		errors.As(err, &verify), errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &cert),
		errors.As(err, &alert):
		return false
	case errors.As(err, &op):
		// crypto/tls reports an alert from the peer with an unexported
		// type, in an OpError of its own name.
		return op.Op != "remote error"
	case errors.As(err, &dns):
		return true
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		// A wrapper such as *url.Error asks only the error it wraps
		// whether it is a timeout, so a deeper one is found by Is.
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}
