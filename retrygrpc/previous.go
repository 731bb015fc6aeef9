package retrygrpc

import (
	"context"
	"strconv"

	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/retry"
)

// withPrevious returns ctx carrying the previous-attempts header for attempt
// n (counting the first attempt), when it is a retry or is made while serving
// one (see retry.PreviousAttempts). The header gets one value, in place of any
// the outgoing metadata has, so that a hop that forwards its incoming
// metadata does not send its caller's count beside its own. Otherwise it
// returns ctx itself.
func withPrevious(ctx context.Context, n int) context.Context {
	prev := n - 1 + retry.PreviousAttempts(ctx)
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
// its grpc-previous-rpc-attempts header says, or 0.
func previous(ctx context.Context) int {
	v := metadata.ValueFromIncomingContext(ctx, PreviousAttemptsKey)
	if len(v) != 1 {
		return 0
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 0 {
		return 0
	}
	return n
}
