package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

// Each line that ends in a retryvet comment holds the mistake that check
// must report there. The functions beside them are the corrections, which
// must stay silent.

func ping(ctx context.Context) error { return ctx.Err() }

var guard = policy.NewGuard(50, 1)

func ignoresContext(ctx context.Context) error {
	return retry.Do(ctx, func(context.Context) error {
		return ping(ctx) // retryvet: ctx
	}, policy.Default().WithMaxAttempts(3))
}

func usesContext(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		return ping(ctx)
	}, policy.Default().WithMaxAttempts(3))
}

func guardPerRequest(w http.ResponseWriter, r *http.Request) {
	g := policy.NewGuard(50, 1) // retryvet: percall
	_ = retry.Do(r.Context(), ping, policy.Default().WithMaxAttempts(3).WithGuard(g))
}

func sharedGuard(w http.ResponseWriter, r *http.Request) {
	_ = retry.Do(r.Context(), ping, policy.Default().WithMaxAttempts(3).WithGuard(guard))
}

func newClient() (*http.Client, error) {
	tr, err := retryhttp.New(nil, policy.Default().WithMaxAttempts(3))
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: tr}, nil
}

func formatsMarkAway(err error) error {
	return fmt.Errorf("charge: %v", retry.Permanent(err)) // retryvet: permanent
}

func wrapsMark(err error) error {
	return fmt.Errorf("charge: %w", retry.Permanent(err))
}

func noLimit(ctx context.Context) error {
	return retry.Do(ctx, ping, policy.Exponential(time.Second)) // retryvet: limit
}

func deadline(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return retry.Do(ctx, ping, policy.Exponential(time.Second))
}

func sleeps(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		time.Sleep(time.Second) // retryvet: sleep
		return ping(ctx)
	}, policy.Default().WithMaxAttempts(3))
}

func policyWaits(ctx context.Context) error {
	return retry.Do(ctx, ping, policy.Constant(time.Second).WithMaxAttempts(3))
}

var (
	_ = []any{ignoresContext, usesContext, guardPerRequest, sharedGuard, newClient, formatsMarkAway,
		wrapsMark, noLimit, deadline, sleeps, policyWaits}
)
