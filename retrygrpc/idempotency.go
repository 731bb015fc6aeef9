package retrygrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"google.golang.org/grpc/metadata"
)

// IdempotencyKey is the request metadata key that names one logical call,
// so that a server can recognise its attempts as one. It is the HTTP
// Idempotency-Key header in gRPC's lowercase spelling. [WithIdempotencyKeys]
// sets it.
const IdempotencyKey = "idempotency-key"

// WithIdempotencyKeys returns an Option that gives every call, and every
// stream, a fresh random [IdempotencyKey] in its request metadata. Every
// attempt of the call sends the same key. A non-empty key the caller set in
// the outgoing metadata is sent as it is.
//
// The key does not change what is retried: the interceptors retry by status
// code alone (see [WithCodes]). It helps on a server that keeps the answer it
// gave each key: such a server answers a retry from that record, so a write
// whose answer was lost is made once. A server that ignores the key makes the
// write again on every attempt.
func WithIdempotencyKeys() Option {
	return func(c config) config {
		c.keys = true
		return c
	}
}

// keyed returns ctx carrying a fresh idempotency key when the interceptor
// gives keys and the caller set none.
func (c *config) keyed(ctx context.Context) context.Context {
	if !c.keys {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy, ours to change
	for _, v := range md.Get(IdempotencyKey) {
		if strings.TrimSpace(v) != "" {
			return ctx
		}
	}
	if md == nil {
		md = metadata.MD{}
	}
	md.Set(IdempotencyKey, newKey())
	return metadata.NewOutgoingContext(ctx, md)
}

// newKey returns a random UUID of version 4 (RFC 9562), in its usual form.
// It is retryhttp's, made here again: the two modules share no internal
// package.
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
