package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// ConnectionError reports whether err is a failure to reach a dependency
// over the network or to hear back from it, one that another attempt may
// not meet. A refused, reset, aborted or broken connection is one. So are
// an EOF before the answer, a network timeout, and any other failed dial,
// read or write that the net package reports as a [net.OpError]. The
// timeouts include the TLS handshake's and an attempt cut off by the
// policy's attempt timeout ([ErrAttemptTimeout]).
//
// A failed DNS lookup is a connection error, a host name that does not
// resolve included. A name can appear later, as a new instance's does in a
// cluster, so the policy's limits, not this function, end a wait for it.
//
// An error that sending again cannot cure is not a connection error, even
// when the network reports it. A malformed address or an unknown network
// ([net.AddrError], [net.InvalidAddrError], [net.UnknownNetworkError]) is
// such an error. So are a certificate that is untrusted, invalid, expired or
// for another host name, and a TLS alert from the peer, such as a server's
// refusal of a client without a certificate.
//
// Any other error is not a connection error either, even when it is a
// [net.Error]. http.Client wraps every error of a request in a *url.Error,
// which is one. So an unsupported URL scheme, an invalid header field and
// too many redirects are not connection errors.
//
// It does not tell whether the caller gave up. A call whose context is done
// fails with an error that may look like a timeout, so look at the context
// as well before retrying.
func ConnectionError(err error) bool {
	return errors.Is(err, ErrAttemptTimeout) || networkFailure(err)
}

// networkFailure is ConnectionError without the loop's own attempt
// timeout. It needs nothing but the standard library, so that it can move
// to a package that every integration shares. go-retryablehttp retries
// any error that it does not list as hopeless; this names what is retried
// instead, since *url.Error makes every error of http.Client a net.Error.
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
