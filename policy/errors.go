package policy

import "errors"

// ErrInvalid is matched by every error [Policy.Validate] returns, and so by
// the error retry.Do returns, before running anything, for a nonsensical
// policy.
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
