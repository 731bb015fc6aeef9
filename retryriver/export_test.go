package retryriver

import "time"

// SetNow makes r read the time from now, for tests.
func (r *RetryPolicy) SetNow(now func() time.Time) { r.now = now }

// SetNow makes m read the time from now, for tests.
func (m *Middleware) SetNow(now func() time.Time) { m.now = now }
