package retrysql

import (
	"fmt"
	"slices"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// An Option changes one [Tx] call. Build one with [WithSQLStates] or
// [WithRetryOptions]. An Option is a plain value: build it once and pass it
// to any number of calls. A nil Option changes nothing. Its shape is that
// of retry.Option.
type Option func(config) config

// config is the settings of one call.
type config struct {
	codes []string
	retry []retry.Option
	err   error
}

// WithSQLStates returns an Option that replaces the SQLSTATE codes [Tx]
// retries, [SerializationFailure] and [DeadlockDetected], with codes. For
// example, WithSQLStates("40001", "40P01", "55P03") also retries
// lock_not_available, the error of a NOWAIT lock or an expired
// lock_timeout. WithSQLStates() with no codes retries no SQLSTATE at all.
// Connection errors before COMMIT are retried either way. A code that is
// not five digits or upper-case letters makes Tx return an error matching
// policy.ErrInvalid before anything runs. When several are given, the last
// wins.
//
// The policy's own predicate, policy.Policy.WithRetryIf, only narrows
// these codes: Tx retries an error only when both agree.
func WithSQLStates(codes ...string) Option {
	for _, c := range codes {
		if !validCode(c) {
			err := fmt.Errorf("retrysql: SQLSTATE code %q is not five digits or upper-case letters: %w", c, policy.ErrInvalid)
			return func(s config) config {
				s.err = err
				return s
			}
		}
	}
	codes = slices.Clone(codes)
	return func(s config) config {
		s.codes = codes
		return s
	}
}

// WithRetryOptions returns an Option that passes opts to the retry.Do call
// that runs the transaction, for example retry.WithHooks to log each retry.
// The options of several WithRetryOptions add up.
func WithRetryOptions(opts ...retry.Option) Option {
	opts = slices.Clone(opts)
	return func(s config) config {
		s.retry = append(slices.Clip(s.retry), opts...)
		return s
	}
}

// collect adds up the options of one call.
func collect(opts []Option) (config, error) {
	s := config{codes: defaultCodes}
	for _, o := range opts {
		if o != nil {
			s = o(s)
		}
		if s.err != nil {
			return s, s.err
		}
	}
	return s, nil
}

var defaultCodes = []string{SerializationFailure, DeadlockDetected}
