package retrygrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/retry"
)

func TestWithPreviousSetsOneValue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		served   int      // the previous attempts of the request the call serves
		n        int      // the attempt, counting the first
		outgoing []string // the values in the outgoing metadata before
		want     []string
	}{
		{"a first attempt", 0, 1, nil, nil},
		{"a first attempt leaves the metadata as it is", 0, 1, []string{"7"}, []string{"7"}},
		{"a retry", 0, 2, nil, []string{"1"}},
		{"a retry replaces a value", 0, 3, []string{"1"}, []string{"2"}},
		{"a retry replaces several", 0, 2, []string{"5", "6"}, []string{"1"}},
		{"serving a retry, forwarded", 1, 1, []string{"1"}, []string{"1"}},
		{"serving a retry, retried", 3, 2, []string{"3"}, []string{"4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, _ := retry.Serve(context.Background(), tc.served)
			ctx = metadata.AppendToOutgoingContext(ctx, "x-other", "kept")
			for _, v := range tc.outgoing {
				ctx = metadata.AppendToOutgoingContext(ctx, PreviousAttemptsKey, v)
			}
			md, _ := metadata.FromOutgoingContext(withPrevious(ctx, tc.n))
			require.Equal(t, tc.want, md.Get(PreviousAttemptsKey))
			require.Equal(t, []string{"kept"}, md.Get("x-other"))
		})
	}
}
