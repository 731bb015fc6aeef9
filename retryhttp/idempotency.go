package retryhttp

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// idempotencyKey is the header that names one logical request, so that a
// server can recognise its attempts as one (Stripe's convention, and the
// IETF httpapi draft "The Idempotency-Key HTTP Header Field").
const idempotencyKey = "Idempotency-Key"

// WithIdempotencyKeys returns an Option that gives each request that is not
// safe to repeat, such as a POST or a PATCH, a fresh random Idempotency-Key
// header, which makes it safe to retry. Every attempt and every hedge of the
// request sends the same key. A key the caller set is sent as it is, unless it
// is empty. The caller's request is never changed: the Transport sends a copy.
//
// The key helps only on a server that keeps the answer it gave each key:
// such a server answers a retry from that record, so a write whose response
// was lost is made once. A server that ignores the header makes the write
// again on every attempt.
func WithIdempotencyKeys() Option {
	return func(c config) config {
		c.keys = true
		return c
	}
}

// keyed returns req, or a copy of it with a fresh Idempotency-Key when the
// Transport gives keys and req is not safe to repeat.
func (t *Transport) keyed(req *http.Request) *http.Request {
	if !t.keys || idempotent(req) {
		return req
	}
	r := *req // as withBody: the copy shares the body, which is sent once either way
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Header.Set(idempotencyKey, newKey())
	return &r
}

// newKey returns a random UUID of version 4 (RFC 9562), in its usual form.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])  // crypto/rand.Read never returns an error: it ends the program instead
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // the variant of RFC 9562
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}
