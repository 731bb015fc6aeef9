// Package retryhttp is a stub of retrykit's retryhttp package: the names
// the analyzers know, with their signatures.
package retryhttp

import (
	"net/http"

	"github.com/retrykit/retrykit/policy"
)

type Option interface{ option() }

type Transport struct{ base http.RoundTripper }

func New(base http.RoundTripper, p policy.Policy, opts ...Option) (*Transport, error) {
	return &Transport{base: base}, nil
}

func WithGuard(g *policy.Guard) Option { return nil }

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(req)
}

func (t *Transport) CloseIdleConnections() {}
