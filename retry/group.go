package retry

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/retrykit/retrykit/policy"
)

// Go runs Do(ctx, fn, p, opts...) in g: fan-out with retries, one line per
// task. Pass the context of errgroup.WithContext as ctx. When one task
// gives up, the group's context is cancelled. Every other task
// waiting in a back-off then returns at once, with its last error kept. So
// g.Wait returns promptly with the first error. g's SetLimit applies as it
// does to g.Go: Go blocks until a slot is free. A nil g is a programming
// error and panics at once. Every other bad argument is Do's error,
// returned through g.
func Go(ctx context.Context, g *errgroup.Group, fn func(context.Context) error, p policy.Policy, opts ...Option) {
	if g == nil {
		panic("retry: Go: nil *errgroup.Group")
	}
	g.Go(func() error { return Do(ctx, fn, p, opts...) })
}
