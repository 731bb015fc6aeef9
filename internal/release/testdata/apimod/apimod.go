// Package apimod has one declaration of each kind that the API files list.
package apimod

import (
	"context"
	"io"
	"time"
)

// Limit is an untyped constant.
const Limit = 3

// Second is a typed constant.
const Second Duration = 1000

// ErrGone is a variable.
var ErrGone = io.EOF

// Duration is a defined type with a method.
type Duration int64

// String is a method on a value.
func (d Duration) String() string { return "" }

// Config is a struct with exported, unexported and embedded fields.
type Config struct {
	io.Reader
	Name    string
	Timeout time.Duration
	Hook    func(ctx context.Context, attempt int) error
	secret  int
}

// Apply is a method on a pointer.
func (c *Config) Apply(opts ...Option) error { return nil }

// unexported methods stay out.
func (c *Config) reset() {}

// Option is a function type.
type Option func(*Config)

// Do is a function with a variadic parameter and two results.
func Do(ctx context.Context, name string, opts ...Option) (int, error) { return 0, nil }

// Map is generic.
func Map[T any, U comparable](in []T, f func(T) U) map[U]T { return nil }

// Set is a generic type.
type Set[K comparable] struct{ m map[K]struct{} }

// Add is a method of a generic type.
func (s *Set[K]) Add(k K) {}

// Source is an interface.
type Source interface {
	io.Closer
	Next(ctx context.Context) (<-chan int, error)
}

// Number is a constraint.
type Number interface {
	~int | ~int64 | float64
}

// Sealed has an unexported method.
type Sealed interface {
	Kind() string
	sealed()
}

// Alias is an alias.
type Alias = Config

// Pair is an anonymous struct's user.
var Pair struct {
	A, B int
}

type hidden struct{}

// Exported is a method of an unexported type, which stays out.
func (hidden) Exported() {}
