package policy

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched by every error that [Policy.Validate] returns, and by
// the errors of [Parse], [Policy.UnmarshalText], [Policy.UnmarshalJSON] and
// [Policy.MarshalText]. It is the one sentinel of bad input: every call of
// package retry, and every integration, refuses an invalid policy, a nil
// function or a nil context with an error matching ErrInvalid, before
// anything runs.
var ErrInvalid = errors.New("policy: invalid")

// invalidError names the setting that is wrong and says why.
type invalidError struct {
	setting string
	reason  string
}

func (e *invalidError) Error() string {
	return "policy: invalid " + e.setting + ": " + e.reason
}

func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// invalidText is an error of bad input whose message says it all; it
// matches ErrInvalid without repeating "policy: invalid" at its end.
type invalidText string

func (e invalidText) Error() string        { return string(e) }
func (e invalidText) Is(target error) bool { return target == ErrInvalid }

// invalidf formats an error matching ErrInvalid.
func invalidf(format string, args ...any) error {
	return invalidText(fmt.Sprintf(format, args...))
}
