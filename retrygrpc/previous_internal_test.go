package retrygrpc

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/retrykit/retrykit/internal/served"
)

func TestPreviousReadsTheHeader(t *testing.T) {
	maxInt := strconv.Itoa(math.MaxInt)
	for _, tc := range []struct {
		name   string
		values []string
		want   int
	}{
		{"absent", nil, 0},
		{"zero", []string{"0"}, 0},
		{"a retry", []string{"1"}, 1},
		{"the largest int", []string{maxInt}, math.MaxInt},
		{"past the largest int64", []string{"9223372036854775808"}, math.MaxInt},
		{"far past it", []string{"99999999999999999999999999"}, math.MaxInt},
		{"negative", []string{"-1"}, 0},
		{"the smallest int64", []string{"-9223372036854775808"}, 0},
		{"below it", []string{"-99999999999999999999999999"}, 0},
		{"garbled", []string{"two"}, 0},
		{"empty", []string{""}, 0},
		{"a fraction", []string{"1.5"}, 0},
		{"padded", []string{" 1"}, 0},
		{"repeated", []string{"1", "1"}, 1},
		{"repeated: the largest counts", []string{"2", "garbled", "5", "-7"}, 5},
		{"repeated: every one garbled", []string{"x", "-1"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.values != nil {
				ctx = metadata.NewIncomingContext(ctx, metadata.MD{PreviousAttemptsKey: tc.values})
			}
			require.Equal(t, tc.want, previous(ctx))
		})
	}
}

func TestWithPreviousSetsOneValue(t *testing.T) {
	maxInt := strconv.Itoa(math.MaxInt)
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
		{"serving the largest count", math.MaxInt, 1, nil, []string{maxInt}},
		{"serving the largest count, retried", math.MaxInt, 2, nil, []string{maxInt}},
		{"serving near the largest count, retried", math.MaxInt - 1, 3, nil, []string{maxInt}},
		{"the largest attempt", 5, math.MaxInt, nil, []string{maxInt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, _ := served.Serve(context.Background(), tc.served, nil)
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

func TestAddAttemptsSaturates(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{0, 0, 0},
		{1, 2, 3},
		{math.MaxInt, 0, math.MaxInt},
		{0, math.MaxInt, math.MaxInt},
		{math.MaxInt - 1, 1, math.MaxInt},
		{math.MaxInt - 1, 2, math.MaxInt},
		{math.MaxInt, math.MaxInt, math.MaxInt},
	} {
		require.Equal(t, tc.want, addAttempts(tc.a, tc.b), "addAttempts(%d, %d)", tc.a, tc.b)
	}
}
