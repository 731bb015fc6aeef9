package retry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// ConnectionError reports whether err is a failure to reach a dependency
// over the network or to hear back from it. That covers a refused, reset,
// aborted or broken connection, an EOF before the answer, a network timeout and an attempt
// cut off by the policy's attempt timeout ([ErrAttemptTimeout]). It does
// not cover an error that sending again cannot cure, such as an untrusted
// certificate or a host name the certificate does not match.
//
// It does not tell whether the caller gave up. A call whose context is done
// fails with an error that may look like a timeout, so look at the context
// as well before retrying.
func ConnectionError(err error) bool {
	if errors.Is(err, ErrAttemptTimeout) {
		return true
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
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}
