package policy

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/internal/plumb"
)

// TestPlumbOf: plumb.Of finds every policy's own Settings, and the default
// policy's for the zero Policy.
func TestPlumbOf(t *testing.T) {
	for _, p := range []Policy{
		{},
		Default(),
		Default().WithMaxAttempts(3),
		Constant(0),
		Exponential(time.Second).WithGuard(NewGuard(10, 0.4)).WithAttemptTimeout(time.Second),
		Exponential(-1), // invalid
	} {
		if got, want := plumb.Of(&p), &p.cfg().run; got != want {
			t.Errorf("plumb.Of(%v) = %p, want %p", p, got, want)
		}
	}
	p := Default().WithMaxAttempts(3).WithMaxElapsed(time.Minute)
	if s := plumb.Of(&p); s.MaxAttempts != 3 || s.MaxElapsed != time.Minute || !s.Simple || s.Unobserved {
		t.Errorf("plumb.Of(%v) = %+v", p, *s)
	}
}
