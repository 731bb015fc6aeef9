// Package policy describes how to retry as an immutable [Policy] value: which
// delays to wait, when to stop, which errors to retry and which [Clock] to
// read. Package retry runs operations under a policy.
//
// A Policy is built from [Default], [Exponential], [Constant] or [Custom] and
// refined with With… methods, each of which returns a modified copy. Bad
// settings are not a panic: [Policy.Validate] reports them as errors matching
// [ErrInvalid], and retry.Do refuses to run an invalid policy.
package policy
