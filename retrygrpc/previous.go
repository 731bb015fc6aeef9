package retrygrpc

import (
	"context"
	"errors"
	"math"
	"strconv"

	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/internal/served"
)

// withPrevious returns ctx carrying the previous-attempts header for attempt
// n (counting the first attempt), when it is a retry or is made while serving
// one (see UnaryServerInterceptor). The header gets one value, in place of any
// the outgoing metadata has, so that a hop that forwards its incoming
// metadata does not send its caller's count beside its own. Otherwise it
// returns ctx itself.
func withPrevious(ctx context.Context, n int) context.Context {
	prev := addAttempts(n-1, served.PreviousAttempts(ctx))
	if prev <= 0 {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy, ours to change
	if md == nil {
		md = metadata.MD{}
	}
	md.Set(PreviousAttemptsKey, strconv.Itoa(prev))
	return metadata.NewOutgoingContext(ctx, md)
}

// previous returns the attempts that came before the call served on ctx, as
// its grpc-previous-rpc-attempts header says, or 0 (see
// [UnaryServerInterceptor]). A repeated header counts by its largest value:
// a client that appended its count to a forwarded one sent both.
func previous(ctx context.Context) int {
	n := 0
	for _, v := range metadata.ValueFromIncomingContext(ctx, PreviousAttemptsKey) {
		n = max(n, parseAttempts(v))
	}
	return n
}

// parseAttempts reads one previous-attempts value. A number past the
// largest int reads as the largest int, so that a huge count stays huge
// rather than reading as a first attempt. A negative or garbled value reads
// as 0.
func parseAttempts(v string) int {
	n, err := strconv.Atoi(v) // past the range of int, Atoi returns the int nearest
	if n < 0 || err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return n
}

// addAttempts returns a + b for counts of 0 or more, or the largest int when
// the sum would overflow: a count saturates, so that it never wraps to a
// negative one that reads as a first attempt.
func addAttempts(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}
