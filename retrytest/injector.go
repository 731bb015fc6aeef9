package retrytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Injector makes calls fail on purpose, as its [Plan] says: plain
// operations through [Wrap] and [WrapValue], HTTP servers through
// [Injector.Handler], HTTP clients through [Injector.Transport], and gRPC
// through the interceptors of module retrygrpc's package retrygrpctest.
// [Injector.Next] and [Injector.Wait] are what those are built on, for a
// layer of one's own.
//
// An Injector is safe for concurrent use. It starts enabled. Its zero value
// is not usable: call [New]. A nil *Injector, which New returns with its
// error, fails every call it is asked about with an error that says so.
// Its SetEnabled and Close do nothing, and its Counts are zero.
type Injector struct {
	plan   Plan
	closed chan struct{} // closed by Close, under mu
	close  sync.Once

	mu      sync.Mutex
	enabled bool      // false for good once closed is
	step    int       // the current step
	calls   int       // calls in the current step so far
	start   time.Time // when the current step's first call came
	rand    *rand.Rand
	counts  Counts
}

// Counts are an injector's totals, as [Injector.Counts] returns them.
//
// A fault counts once in Injected and once under each kind it has. A fault
// with a Latency and an Err counts in Delays and in Errors.
type Counts struct {
	Calls    int // every call the injector saw, enabled or not (HTTP: those Match picks)
	Injected int // the calls that got a fault

	Delays, Errors, Hints, Panics, Statuses, Resets, Stalls, Truncations, Partials int
}

// New returns an injector that follows p. It returns an error, and no
// injector, when p makes no sense: a Rate outside [0, 1] or NaN, a negative
// duration or count, a last step that ends, a fault with two
// outcomes, a typed nil Clock, and the like. The error says which step
// and why.
func New(p Plan) (*Injector, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("retrytest: invalid plan: %w", err)
	}
	p.Steps = append([]Step(nil), p.Steps...) // the caller's slice may change
	in := &Injector{plan: p, closed: make(chan struct{}), rand: rand.New(rand.NewPCG(p.Seed, seedStream))}
	in.enabled = true
	return in, nil
}

// seedStream is the second word of the PCG seed: any constant does, as long
// as it never changes, so that a Seed means the same faults in every
// release.
const seedStream = 0x7265747279746573 // "retrytes"

// SetEnabled turns the injector on or off while calls run. While it is off,
// every call goes through untouched, as in an outage that has ended.
// Turning it off does not end a fault that has already struck: a stall
// lasts until its context ends or [Injector.Close]. Calls made while the
// injector is off count in Counts.Calls. They do not move its script on or
// draw from its seed, so the faults after it is turned on again are the
// same whatever happened meanwhile. Steps with For go on ending on the
// clock. After [Injector.Close], SetEnabled does nothing: the injector
// stays off.
func (in *Injector) SetEnabled(on bool) {
	if in == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	select {
	case <-in.closed:
	default:
		in.enabled = on
	}
}

// Close ends every stall and every latency at once, with [ErrClosed], and
// turns the injector off for good: a later [Injector.SetEnabled] does not
// turn it on again. A test closes it before the server it serves: a server
// waits for its stalled requests before it shuts down. Close may be called
// any number of times.
func (in *Injector) Close() {
	if in == nil {
		return
	}
	in.close.Do(func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.enabled = false
		close(in.closed)
	})
}

// Counts returns the totals so far.
func (in *Injector) Counts() Counts {
	if in == nil {
		return Counts{}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.counts
}

// Next decides what the next call gets, counts it and tells the plan's
// OnInject of it. It returns the fault and true, or the zero Fault and false
// when the call is to go through. ctx is the call's, for OnInject. The
// caller makes the fault strike, beginning with [Injector.Wait].
func (in *Injector) Next(ctx context.Context) (Fault, bool) {
	if in == nil {
		return Fault{Err: errNil}, true
	}
	in.mu.Lock()
	in.counts.Calls++
	call := in.counts.Calls
	if !in.enabled {
		in.mu.Unlock()
		return Fault{}, false
	}
	step, s, ok := in.decide()
	if ok {
		in.count(s.Fault)
	}
	in.mu.Unlock()
	if !ok {
		return Fault{}, false
	}
	if in.plan.OnInject != nil {
		in.plan.OnInject(ctx, Injection{Call: call, Step: step, Fault: s.Fault})
	}
	return s.Fault, true
}

// decide moves the script on by one call and returns the step that call
// falls in and whether it gets its fault. It runs with mu held.
func (in *Injector) decide() (int, Step, bool) {
	var now time.Time
	for {
		s := in.plan.Steps[in.step]
		if s.For > 0 && now.IsZero() {
			now = in.now()
		}
		if in.calls == 0 {
			in.start = now
		}
		ended := (s.Times > 0 && in.calls >= s.Times) || (s.For > 0 && in.calls > 0 && now.Sub(in.start) >= s.For)
		if !ended {
			break
		}
		in.step++
		in.calls = 0
	}
	in.calls++
	s := in.plan.Steps[in.step]
	if s.random() && in.rand.Float64() >= s.Rate {
		return in.step, s, false
	}
	return in.step, s, !s.Fault.zero()
}

// count adds f to the totals. It runs with mu held.
func (in *Injector) count(f Fault) {
	c := &in.counts
	c.Injected++
	for _, k := range []struct {
		set bool
		n   *int
	}{
		{f.Latency > 0, &c.Delays}, {f.Err != nil, &c.Errors}, {f.Hint > 0, &c.Hints},
		{f.Panic != nil, &c.Panics}, {f.Status != 0, &c.Statuses}, {f.Reset, &c.Resets},
		{f.Stall, &c.Stalls}, {f.Truncate, &c.Truncations}, {f.Partial, &c.Partials},
	} {
		if k.set {
			*k.n++
		}
	}
}

// now reads the plan's clock.
func (in *Injector) now() time.Time {
	if in.plan.Clock == nil {
		return time.Now()
	}
	return in.plan.Clock.Now()
}

// Wait makes f's waiting part happen. It waits f's Latency on the plan's
// clock, and then, for a Stall, until ctx ends. It returns nil when the wait
// is over, ctx's error when ctx ended it, and [ErrClosed] when
// [Injector.Close] did. For a fault with neither Latency nor Stall it
// returns nil at once.
func (in *Injector) Wait(ctx context.Context, f Fault) error {
	if in == nil {
		return errNil
	}
	if f.Latency > 0 {
		var fired <-chan time.Time
		if in.plan.Clock == nil {
			t := time.NewTimer(f.Latency)
			defer t.Stop()
			fired = t.C
		} else {
			fired = in.plan.Clock.After(f.Latency)
		}
		select {
		case <-fired:
		case <-ctx.Done():
			return ctx.Err()
		case <-in.closed:
			return ErrClosed
		}
	}
	if f.Stall {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-in.closed:
			return ErrClosed
		}
	}
	return nil
}

// matches reports whether the plan is for r.
func (in *Injector) matches(r *http.Request) bool {
	return in.plan.Match == nil || in.plan.Match(r)
}

// errNil is what a nil *Injector's calls fail with.
var errNil = errors.New("retrytest: nil *Injector (New returned an error?)")
