package retrysql

import (
	"fmt"
	"slices"

	"github.com/retrykit/retrykit/retry"
)

// An Option changes one [Tx] call. Options are plain values: build one once
// and pass it to any number of calls.
type Option struct {
	codes    []string
	setCodes bool
	retry    []retry.Option
	err      error
}

// RetryCodes returns an Option that replaces the SQLSTATE codes retried by
// [Tx] (by default [SerializationFailure] and [DeadlockDetected]) with
// codes: for example RetryCodes("40001", "40P01", "55P03") also retries
// lock_not_available, the error of a NOWAIT lock or an expired
// lock_timeout. RetryCodes() with no codes retries no SQLSTATE at all.
// Connection errors before COMMIT are retried either way. A code that is
// not five digits or upper-case letters makes Tx return an error matching
// retry.ErrInvalid before anything runs.
func RetryCodes(codes ...string) Option {
	for _, c := range codes {
		if !validCode(c) {
			return Option{err: fmt.Errorf("retrysql: SQLSTATE code %q is not five digits or upper-case letters: %w", c, retry.ErrInvalid)}
		}
	}
	return Option{codes: slices.Clone(codes), setCodes: true}
}

// RetryOptions returns an Option that passes opts to the retry.Do call that
// runs the transaction, for example retry.WithHooks to log each retry.
func RetryOptions(opts ...retry.Option) Option {
	return Option{retry: slices.Clone(opts)}
}

// settings adds up the options of one call; later codes win, retry options
// accumulate.
type settings struct {
	codes []string
	retry []retry.Option
}

func collect(opts []Option) (settings, error) {
	s := settings{codes: defaultCodes}
	for _, o := range opts {
		if o.err != nil {
			return s, o.err
		}
		if o.setCodes {
			s.codes = o.codes
		}
		s.retry = append(s.retry, o.retry...)
	}
	return s, nil
}

var defaultCodes = []string{SerializationFailure, DeadlockDetected}
