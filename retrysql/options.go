package retrysql

import (
	"fmt"
	"slices"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// An Option changes one [Tx] call. Build one with [WithRetryIf] or
// [WithRetryOptions]. An Option is a plain value: build it once and pass it
// to any number of calls. A nil Option changes nothing.
type Option func(*settings)

// settings are the options of one call.
type settings struct {
	codes []string
	retry []retry.Option
	err   error
}

// WithRetryIf returns an Option that makes [Tx] retry the SQLSTATE codes
// given, in place of [SerializationFailure] and [DeadlockDetected]. For
// example, WithRetryIf("40001", "40P01", "55P03") also retries
// lock_not_available, the error of a NOWAIT lock or an expired
// lock_timeout. WithRetryIf() with no codes retries no SQLSTATE at all.
// Connection errors before COMMIT are retried either way. A code that is
// not five digits or upper-case letters makes Tx return an error matching
// policy.ErrInvalid before anything runs. When several are given, the last
// wins.
//
// This WithRetryIf takes SQLSTATE codes. policy.Policy.WithRetryIf takes a
// function of the error. Tx asks both, and retries an error only when both
// agree.
func WithRetryIf(codes ...string) Option {
	for _, c := range codes {
		if !validCode(c) {
			err := fmt.Errorf("retrysql: SQLSTATE code %q is not five digits or upper-case letters: %w", c, policy.ErrInvalid)
			return func(s *settings) { s.err = err }
		}
	}
	codes = slices.Clone(codes)
	return func(s *settings) { s.codes = codes }
}

// WithRetryOptions returns an Option that passes opts to the retry.Do call
// that runs the transaction, for example retry.WithHooks to log each retry.
// The options of several WithRetryOptions add up.
func WithRetryOptions(opts ...retry.Option) Option {
	opts = slices.Clone(opts)
	return func(s *settings) { s.retry = append(slices.Clip(s.retry), opts...) }
}

// collect adds up the options of one call.
func collect(opts []Option) (settings, error) {
	s := settings{codes: defaultCodes}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
		if s.err != nil {
			return s, s.err
		}
	}
	return s, nil
}

var defaultCodes = []string{SerializationFailure, DeadlockDetected}
