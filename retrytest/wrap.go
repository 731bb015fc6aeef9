package retrytest

import (
	"context"
	"errors"
	"fmt"

	"github.com/retrykit/retrykit/retry"
)

// Wrap returns fn with in's faults. Each call asks in for its fault, as
// [Injector.Next] does. A call that gets one waits its Latency, then fails,
// panics or stalls as the fault says, instead of calling fn. A fault with
// Latency alone delays fn. Err comes back as it is, marked with retry.After
// when the fault has a Hint. Reset returns an error that matches
// syscall.ECONNRESET. A fault of HTTP's alone (Status, Partial) fails the
// call with an error that says so.
//
// A nil in or fn gives a function whose every call fails with an error
// saying so.
func Wrap(in *Injector, fn func(context.Context) error) func(context.Context) error {
	var op func(context.Context) (struct{}, error)
	if fn != nil {
		op = func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }
	}
	wrapped := WrapValue(in, op)
	return func(ctx context.Context) error {
		_, err := wrapped(ctx)
		return err
	}
}

// WrapValue is [Wrap] for an operation that returns a value. A call that a
// fault fails returns T's zero value.
func WrapValue[T any](in *Injector, fn func(context.Context) (T, error)) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) {
		var zero T
		switch {
		case in == nil:
			return zero, errNil
		case fn == nil:
			return zero, errNilFunc
		}
		f, ok := in.Next(ctx)
		if !ok {
			return fn(ctx)
		}
		if err := in.Wait(ctx, f); err != nil {
			return zero, err
		}
		switch {
		case f.Status != 0:
			return zero, fmt.Errorf("retrytest: a plain operation cannot answer with HTTP status %d", f.Status)
		case f.Partial:
			return zero, errors.New("retrytest: a plain operation has no response for a Partial fault to break")
		case f.Panic != nil:
			panic(f.Panic)
		case f.Err != nil:
			return zero, hinted(f)
		case f.Reset:
			return zero, errReset()
		}
		return fn(ctx)
	}
}

// hinted returns f's Err, marked with its Hint.
func hinted(f Fault) error {
	if f.Hint > 0 {
		return retry.After(f.Hint, f.Err)
	}
	return f.Err
}

// errNilFunc is what a wrapped nil function fails with.
var errNilFunc = errors.New("retrytest: nil function")
