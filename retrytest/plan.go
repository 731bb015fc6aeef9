package retrytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// Step is one stretch of a [Plan]'s script: Fault for Times calls, or for
// the time For, or forever when both are zero.
//
// The last step of a plan lasts forever, and only the last. A script that
// lets calls go through once its faults are over ends with Step{}, a step
// of calls that pass. With a Rate,
// the step is random: each of its calls gets the fault with that
// probability and goes through otherwise. A rate that changes over time is
// a sequence of steps, each with a For and a Rate of its own.
type Step struct {
	// Fault is what the step's calls get. The zero Fault lets them go
	// through: a step of calls that pass.
	Fault Fault

	// Times is how many calls the step lasts, the calls that pass included.
	Times int

	// For is how long the step lasts, on the plan's clock, from its first
	// call. The first call past it starts the next step. A step has Times
	// or For, not both.
	For time.Duration

	// Rate, when not zero, makes the step random: each of its calls gets
	// Fault with probability Rate, from 0 to 1, drawn from the plan's Seed.
	// Zero means every call, as 1 does. A step of calls that all pass is a
	// zero Fault, not a zero Rate.
	Rate float64
}

// Plan says which calls an [Injector] makes fail, and how: a script of
// steps, run in order, one call after another.
//
// The script's last step lasts forever: it has neither Times nor For. So
// every call of the test falls in a step the plan names. [New] refuses a
// plan whose last step ends, and the zero Plan, which has no step.
//
// The same Plan, Seed included, makes the same decisions for the same
// sequence of calls, on every run and under testing/synctest: the n-th call
// gets the same fault each time. The decisions do not depend on which
// goroutine makes a call, only on the order in which the calls reach the
// injector. A step with For reads the plan's clock.
type Plan struct {
	// Steps is the script.
	Steps []Step

	// Seed seeds the random draws of the steps with a Rate.
	Seed uint64

	// Clock is what Latency waits on and For measures with. Nil is the real
	// clock, which is virtual inside a testing/synctest bubble.
	// Any policy.Clock fits: the Mock of github.com/benbjohnson/clock, [Clock].
	Clock policy.Clock

	// Match, for HTTP, picks the requests the plan is for, by method,
	// path, header or anything else. The others go through untouched and do
	// not count as calls. Nil picks every request.
	Match func(*http.Request) bool

	// OnInject, when not nil, is called with each injection, on the
	// goroutine of the call, before the fault strikes. It must be safe for
	// concurrent use when the calls are concurrent.
	OnInject func(context.Context, Injection)
}

// Injection describes one fault about to strike, for [Plan.OnInject].
type Injection struct {
	Call  int   // the call's number among every call the injector saw, from 1
	Step  int   // the step of [Plan.Steps] it came from, from 0
	Fault Fault // what strikes
}

// maxSteps bounds the steps of a plan, so that a plan read from input
// cannot make a huge one.
const maxSteps = 1 << 16

// validate says what is wrong with p, as an error for New.
func (p Plan) validate() error {
	if len(p.Steps) > maxSteps {
		return fmt.Errorf("%d steps, more than %d", len(p.Steps), maxSteps)
	}
	for i, s := range p.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if s.forever() && i < len(p.Steps)-1 {
			return fmt.Errorf("step %d lasts forever (no Times, no For), so steps after it never run", i)
		}
	}
	switch last := len(p.Steps) - 1; {
	case last < 0:
		return errors.New("no Steps: give the script its steps; Steps: []Step{{}} lets every call through")
	case !p.Steps[last].forever():
		return fmt.Errorf("the last step, %d, ends: the last step must last forever (no Times, no For); add Step{} after it to let the calls that follow go through, or drop its Times or For to repeat its fault", last)
	}
	if err := policy.Default().WithClock(p.Clock).Validate(); err != nil {
		return fmt.Errorf("Clock: %w", err)
	}
	return nil
}

// validate says what is wrong with s, or nil.
func (s Step) validate() error {
	switch {
	case s.Times < 0:
		return fmt.Errorf("negative Times %d", s.Times)
	case s.For < 0:
		return fmt.Errorf("negative For %v", s.For)
	case s.Times > 0 && s.For > 0:
		return errors.New("both Times and For: give one")
	case math.IsNaN(s.Rate) || s.Rate < 0 || s.Rate > 1:
		return fmt.Errorf("a Rate of %v is not from 0 to 1", s.Rate)
	}
	return s.Fault.validate()
}

// forever reports whether s has no end of its own.
func (s Step) forever() bool { return s.Times == 0 && s.For == 0 }

// random reports whether s draws for each call.
func (s Step) random() bool { return s.Rate != 0 && s.Rate != 1 }
