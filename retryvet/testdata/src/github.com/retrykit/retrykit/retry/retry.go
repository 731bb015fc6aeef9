// Package retry is a stub of retrykit's retry package: the names the
// analyzers know, with their signatures.
package retry

import (
	"context"

	"github.com/retrykit/retrykit/policy"
	"golang.org/x/sync/errgroup"
)

type Option interface{ option() }

func Do(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return fn(ctx)
}

func DoValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, opts ...Option) (T, error) {
	return fn(ctx)
}

func Hedge(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return fn(ctx)
}

func HedgeValue[T any](ctx context.Context, fn func(context.Context) (T, error), p policy.Policy, discard func(T), opts ...Option) (T, error) {
	return fn(ctx)
}

func Loop(ctx context.Context, fn func(context.Context) error, p policy.Policy, opts ...Option) error {
	return fn(ctx)
}

func Go(ctx context.Context, g *errgroup.Group, fn func(context.Context) error, p policy.Policy, opts ...Option) {
	g.Go(func() error { return fn(ctx) })
}

func Permanent(err error) error { return err }
