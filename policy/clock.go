package policy

import "time"

// Clock is the time source a policy waits on. The real clock, the Mock of
// github.com/benbjohnson/clock and a test's own fake all satisfy it as they
// are. retrytest.Clock wraps that Mock and tells a test when the code under
// test starts a wait.
//
// When a policy has a Clock, package retry reads Now from it and compares it
// with a context's deadline. So a context given to retry.Do should take its
// deadline from the same clock. The benbjohnson Mock and retrytest.Clock
// have WithTimeout for that.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}
