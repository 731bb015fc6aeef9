package policy

import "time"

// Clock is the time source a policy waits on. The real clock, the Mock of
// github.com/benbjohnson/clock and a test's own fake all satisfy it as they
// are.
//
// When a policy has a Clock, package retry reads Now from it and compares it
// with a context's deadline, so contexts given to retry.Do should take their
// deadlines from the same clock (the benbjohnson Mock has WithTimeout for
// that).
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}
