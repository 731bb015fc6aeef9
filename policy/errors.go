package policy

import "errors"

// ErrInvalid is matched by every error that [Policy.Validate] returns, and by
// the errors of [Parse], [Policy.UnmarshalText], [Policy.UnmarshalJSON] and
// [Policy.MarshalText]. retry.Do checks the policy before it runs anything,
// and its error for an invalid policy matches ErrInvalid too.
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
