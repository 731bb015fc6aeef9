// Package storm simulates a retry storm: open-loop traffic against a FIFO
// server that stalls, with clients retrying through package retry. The
// repository's storm test runs it inside testing/synctest on the real clock;
// examples/storm runs it on [Virtual], a deterministic clock of its own.
package storm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/draw"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// Outage says how a scenario's server fails besides its stall.
type Outage int

const (
	// NoOutage: the server answers every attempt that reaches it.
	NoOutage Outage = iota
	// FastOutage: every attempt fails at once.
	FastOutage
	// SlowOutage: no attempt is ever answered; each ends by its timeout.
	SlowOutage
	// LimitOutage: every attempt is refused at once by a rate limit (a
	// 429 Too Many Requests), which counts as overload.
	LimitOutage
)

// Scenario is the traffic and the server of one run.
type Scenario struct {
	Name     string
	Rate     int           // calls per second, evenly spaced (open loop)
	Duration time.Duration // how long calls keep arriving
	Service  time.Duration // the server's time per attempt, one at a time, first come first served
	StallAt  time.Duration // when the server stops serving, from the start
	Stall    time.Duration // for how long; 0: no stall
	FailRate float64       // share of attempts that fail at once, at random, without reaching the server
	Outage   Outage
	OutageAt time.Duration // when the outage starts
	OutageOf time.Duration // how long it lasts; 0: the whole run
	SlowAt   time.Duration // when the server slows down
	SlowOf   time.Duration // for how long; 0: it does not
	Slow     time.Duration // its time per attempt meanwhile
	Seed     uint64        // for the random failures

	// Callers, when not 0, makes the traffic a closed loop instead of
	// Rate's open loop: that many callers, each making one call after
	// another, Pause apart, until Duration has passed.
	Callers int
	Pause   time.Duration

	// Policy is the clients' common policy, which each [Client] changes;
	// nil: [Retrying].
	Policy func() policy.Policy
}

// base returns the clients' common policy.
func (s Scenario) base() policy.Policy {
	if s.Policy == nil {
		return Retrying()
	}
	return s.Policy()
}

// in reports whether t is in the window that starts at at and lasts of
// (0: for ever).
func in(t, at, of time.Duration) bool {
	return t >= at && (of == 0 || t < at+of)
}

// Storm is the scenario of the storm goal: 800 calls/s for 40 s against a
// server of 1,000 calls/s that stalls for 2 s at t = 5 s.
func Storm() Scenario {
	return Scenario{Name: "storm", Rate: 800, Duration: 40 * time.Second, Service: time.Millisecond, StallAt: 5 * time.Second, Stall: 2 * time.Second}
}

// ShortStall is the storm's traffic and server with a stall of d at
// t = 5 s, for the sweep of short stalls: a pause shorter than the attempt
// timeout times nothing out, and the guard holds nothing back.
func ShortStall(d time.Duration) Scenario {
	s := Storm()
	s.Name, s.Stall, s.Duration = fmt.Sprintf("stall %v", d), d, 15*time.Second
	return s
}

// ClosedOutage is a closed loop through an outage: 10,000 callers, each
// making one call after another a second apart, for 12 s, through a 5 s
// outage from t = 2 s whose attempts fail as o says; the server answers
// at once otherwise.
func ClosedOutage(o Outage) Scenario {
	s := Scenario{Name: "closed loop, outage", Duration: 12 * time.Second, Callers: 10_000, Pause: time.Second,
		Outage: o, OutageAt: 2 * time.Second, OutageOf: 5 * time.Second}
	if o == SlowOutage {
		s.Name = "closed loop, outage by timeout"
	}
	return s
}

// Overload is the same traffic against a server that slows down below it,
// to 500 calls/s, for 4 s at t = 5 s, without stalling.
func Overload() Scenario {
	s := Storm()
	s.Name, s.Stall = "overload", 0
	s.SlowAt, s.SlowOf, s.Slow = 5*time.Second, 4*time.Second, 2*time.Millisecond
	return s
}

// Sporadic is the same traffic and server without a stall, where one attempt
// in ten fails at once.
func Sporadic() Scenario {
	s := Partial(0.1)
	s.Name = "sporadic 10%"
	return s
}

// Partial is the same traffic and server without a stall, where a share of
// the attempts fails at once, at random: one backend of three bad is 1/3.
func Partial(rate float64) Scenario {
	s := Storm()
	s.Name = fmt.Sprintf("partial %.0f%%", 100*rate)
	s.Stall, s.FailRate, s.Seed = 0, rate, 1
	return s
}

// Blip is the same traffic and server without a stall, where every attempt
// fails at once for 60 ms after 20 s of health (a restart that resets
// connections): about 48 calls fail together, and every retry would
// succeed.
func Blip() Scenario {
	s := Storm()
	s.Name, s.Stall = "blip", 0
	s.Outage, s.OutageAt, s.OutageOf = FastOutage, 20*time.Second, 60*time.Millisecond
	return s
}

// Down is the same traffic against a server that fails every attempt, at
// once (FastOutage) or by timeout (SlowOutage).
func Down(o Outage) Scenario {
	s := Storm()
	s.Name, s.Stall, s.Outage = "down", 0, o
	if o == SlowOutage {
		s.Name = "down by timeout"
	}
	return s
}

// FleetOutage is when a thousand calls start within a second, into a
// dependency that fails every attempt at once for its first 10 s; the
// clients retry from 100 ms, ×2, cap 5 s, full jitter, within a time limit
// of 60 s.
func FleetOutage() Scenario {
	return Scenario{
		Name: "fleet outage", Rate: 1000, Duration: time.Second, Service: time.Millisecond,
		Outage: FastOutage, OutageOf: FleetDown,
		Policy: func() policy.Policy {
			return policy.Exponential(100 * time.Millisecond).WithCap(5 * time.Second).
				WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxElapsed(time.Minute)
		},
	}
}

// FleetDown is how long the dependency of [FleetOutage] is down.
const FleetDown = 10 * time.Second

// FleetLimit is when a thousand calls arrive over 2 s at a dependency that
// refuses every attempt at once with a rate limit's 429 for its first
// 10 s, then serves 1,000 calls a second. The clients retry as in
// [FleetOutage], each attempt with a 1 s timeout.
func FleetLimit() Scenario {
	return Scenario{
		Name: "fleet rate limit", Rate: 500, Duration: 2 * time.Second, Service: time.Millisecond,
		Outage: LimitOutage, OutageOf: FleetDown, Policy: fleetWaiting,
	}
}

// FleetStall is when a thousand calls arrive over 2 s at a dependency that
// answers nothing for its first 10 s, then serves 1,000 calls a second.
// The clients retry as in [FleetOutage], each attempt with a 1 s timeout.
func FleetStall() Scenario {
	return Scenario{
		Name: "fleet stall", Rate: 500, Duration: 2 * time.Second, Service: time.Millisecond,
		Stall: FleetDown, Policy: fleetWaiting,
	}
}

// fleetWaiting is the policy of callers willing to wait a minute: from
// 100 ms, ×2, cap 5 s, full jitter, a 60 s time limit, each attempt with
// a 1 s timeout.
func fleetWaiting() policy.Policy {
	return policy.Exponential(100 * time.Millisecond).WithCap(5 * time.Second).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxElapsed(time.Minute).WithAttemptTimeout(AttemptTimeout)
}

// AttemptTimeout is each attempt's timeout in every client.
const AttemptTimeout = time.Second

// Client is one retry configuration under test. New returns its policy for
// one run, made from the scenario's common policy, with a fresh guard.
type Client struct {
	Name string
	New  func(base policy.Policy) policy.Policy
}

// Retrying is the clients' common policy: exponential back-off from 100 ms,
// ×2, cap 2 s, full jitter, at most 4 attempts, each with a 1 s timeout.
func Retrying() policy.Policy {
	return policy.Exponential(100 * time.Millisecond).WithCap(2 * time.Second).WithMaxAttempts(4).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithAttemptTimeout(AttemptTimeout)
}

// Clients returns the configurations compared: no retry, plain retries,
// and last the default guard ([Guarded]).
func Clients() []Client {
	return []Client{
		{"no retry", func(base policy.Policy) policy.Policy { return base.WithMaxAttempts(1) }},
		{"plain retries", func(base policy.Policy) policy.Policy { return base }},
		Guarded(),
	}
}

// For returns the client's policy for a run of s.
func (c Client) For(s Scenario) policy.Policy { return c.New(s.base()) }

// Guarded is the client with the default guard, policy.NewGuard(50, 1).
func Guarded() Client {
	return Client{
		Name: "NewGuard(50, 1)",
		New:  func(base policy.Policy) policy.Policy { return base.WithGuard(policy.NewGuard(50, 1)) },
	}
}

// Result is what one run measured.
type Result struct {
	Calls     int
	Succeeded int
	Attempts  int
	// Shed is how many calls the guard held back before their first
	// attempt (retry.ErrShed).
	Shed int
	// Ends holds when each call ended, from the start of the run.
	Ends []time.Duration
	// Goodput holds, for each second of arrivals, the share of the calls
	// that arrived in it that succeeded.
	Goodput []float64
}

// Success returns the share of calls that succeeded.
func (r Result) Success() float64 { return float64(r.Succeeded) / float64(r.Calls) }

// Lost returns the calls that did not succeed.
func (r Result) Lost() int { return r.Calls - r.Succeeded }

// EndQuantile returns the q quantile of the times after from at which the
// calls ended (0 for a call that ended before from).
func (r Result) EndQuantile(q float64, from time.Duration) time.Duration {
	after := make([]time.Duration, len(r.Ends))
	for i, e := range r.Ends {
		after[i] = max(e-from, 0)
	}
	slices.Sort(after)
	if len(after) == 0 {
		return 0
	}
	return after[min(int(math.Ceil(q*float64(len(after))))-1, len(after)-1)]
}

// Amplification returns the attempts made per call.
func (r Result) Amplification() float64 { return float64(r.Attempts) / float64(r.Calls) }

// Recovered returns how long after from (a whole second) goodput took to
// reach min for good: the time from from until every later second has a
// goodput of at least min. ok is false if the last second is below min.
func (r Result) Recovered(from time.Duration, min float64) (after time.Duration, ok bool) {
	first := len(r.Goodput)
	for first > 0 && r.Goodput[first-1] >= min {
		first--
	}
	if first == len(r.Goodput) {
		return 0, false
	}
	return max(time.Duration(first)*time.Second-from, 0), true
}

var (
	errFailed  = errors.New("storm: attempt failed")
	errDown    = errors.New("storm: server down")
	errLimited = limited{}
)

// limited is a rate limit's refusal, which reports a timeout as package
// retryhttp reports a 429: it counts as overload.
type limited struct{}

func (limited) Error() string { return "storm: 429 too many requests" }
func (limited) Timeout() bool { return true }

// env is how a run waits: the real clock (inside testing/synctest) or
// [Virtual].
type env interface {
	// now returns the time since the start of the run.
	now() time.Duration
	// wait waits d or until ctx is done, and then returns ctx's error if
	// ctx is done.
	wait(ctx context.Context, d time.Duration) error
}

// run is one run's shared state.
type run struct {
	s   Scenario
	p   policy.Policy
	env env

	mu   sync.Mutex
	free time.Duration // when the server can start the next attempt

	ok       []bool          // by call
	shed     []bool          // by call: held back before its first attempt
	made     []bool          // by call, in a closed loop: the call was made before the end
	begins   []time.Duration // by call, in a closed loop
	ends     []time.Duration // by call
	attempts []atomic.Int64  // by call; hedged attempts of one call run at once
}

func newRun(s Scenario, p policy.Policy, e env) *run {
	n := s.Rate * int(s.Duration/time.Second)
	if s.Callers > 0 {
		n = s.Callers * s.perCaller()
	}
	r := &run{s: s, p: p, env: e, ok: make([]bool, n), shed: make([]bool, n), ends: make([]time.Duration, n), attempts: make([]atomic.Int64, n)}
	if s.Callers > 0 {
		r.made, r.begins = make([]bool, n), make([]time.Duration, n)
	}
	return r
}

// perCaller is the most calls one caller of a closed loop can make.
func (s Scenario) perCaller() int { return int(s.Duration/s.Pause) + 1 }

// caller makes the calls of caller c of a closed loop, each with do, and
// waits with wait between them.
func (r *run) caller(c int, do func(i int), wait func(time.Duration)) {
	for k := range r.s.perCaller() {
		now := r.env.now()
		if now >= r.s.Duration {
			return
		}
		i := c*r.s.perCaller() + k
		r.made[i], r.begins[i] = true, now
		do(i)
		wait(r.s.Pause)
	}
}

// arrival returns when call i arrives.
func (r *run) arrival(i int) time.Duration {
	return time.Duration(i) * time.Second / time.Duration(r.s.Rate)
}

// call makes call i, and is the only writer of its entries.
func (r *run) call(i int) {
	err := retry.Do(context.Background(), func(ctx context.Context) error { return r.attempt(ctx, i) }, r.p)
	r.ok[i], r.shed[i] = err == nil, errors.Is(err, retry.ErrShed)
	r.ends[i] = r.env.now()
}

// attempt makes one attempt of call i against the server.
func (r *run) attempt(ctx context.Context, i int) error {
	k := int(r.attempts[i].Add(1) - 1)
	down := r.s.Outage != NoOutage && in(r.env.now(), r.s.OutageAt, r.s.OutageOf)
	switch {
	case down && r.s.Outage == FastOutage:
		return errDown
	case down && r.s.Outage == LimitOutage:
		return errLimited
	case down && r.s.Outage == SlowOutage:
		if err := r.env.wait(ctx, 24*time.Hour); err != nil {
			return err
		}
		return errDown
	case r.s.FailRate > 0 && draw.Unit(r.s.Seed, uint64(i), uint64(k)) < r.s.FailRate:
		return errFailed
	}
	now := r.env.now()
	return r.env.wait(ctx, r.enqueue(now)-now)
}

// enqueue queues an attempt that arrives at now and returns when the server
// will have finished it. The server serves it whether or not its client is
// still waiting: it cannot tell.
func (r *run) enqueue(now time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := max(now, r.free)
	if r.s.Stall > 0 && start >= r.s.StallAt && start < r.s.StallAt+r.s.Stall {
		start = r.s.StallAt + r.s.Stall
	}
	service := r.s.Service
	if r.s.SlowOf > 0 && in(start, r.s.SlowAt, r.s.SlowOf) {
		service = r.s.Slow
	}
	r.free = start + service
	return r.free
}

func (r *run) result() Result {
	res := Result{Goodput: make([]float64, int(r.s.Duration/time.Second))}
	perSecond := make([]int, len(res.Goodput))
	for i, ok := range r.ok {
		sec := 0
		switch {
		case r.made == nil:
			sec = int(r.arrival(i) / time.Second)
		case !r.made[i]:
			continue
		default:
			sec = min(int(r.begins[i]/time.Second), len(perSecond)-1)
		}
		res.Calls++
		res.Ends = append(res.Ends, r.ends[i])
		res.Attempts += int(r.attempts[i].Load())
		perSecond[sec]++
		if ok {
			res.Succeeded++
			res.Goodput[sec]++
		}
		if r.shed[i] {
			res.Shed++
		}
	}
	for sec, n := range perSecond {
		if n > 0 {
			res.Goodput[sec] /= float64(n)
		}
	}
	return res
}

// RunReal runs s with the policy p on the real clock, one goroutine per
// call. Run it inside testing/synctest's bubble, where the real clock's
// time is virtual and a run takes seconds.
func RunReal(s Scenario, p policy.Policy) Result {
	return runReal(s, p, nil)
}

// RunRealThrough is [RunReal] for a client of one's own: call makes call i,
// retrying as it likes, with attempt making each attempt against the server
// (nil when served, an error when the attempt failed or its context ended
// first), and reports whether the call succeeded. Every attempt must go
// through attempt, started before call returns; attempts may run at once
// and outlive call (the losers of hedged calls): each is counted as it
// starts.
func RunRealThrough(s Scenario, call func(i int, attempt func(ctx context.Context) error) bool) Result {
	return runReal(s, policy.Policy{}, call)
}

func runReal(s Scenario, p policy.Policy, through func(int, func(context.Context) error) bool) Result {
	start := time.Now()
	r := newRun(s, p, realEnv{start})
	do := r.call
	if through != nil {
		do = func(i int) {
			r.ok[i] = through(i, func(ctx context.Context) error { return r.attempt(ctx, i) })
			r.ends[i] = r.env.now()
		}
	}
	var wg sync.WaitGroup
	if s.Callers > 0 {
		for c := range s.Callers {
			wg.Add(1)
			go func() { defer wg.Done(); r.caller(c, do, time.Sleep) }()
		}
		wg.Wait()
		return r.result()
	}
	for i := range r.ok {
		time.Sleep(r.arrival(i) - time.Since(start))
		wg.Add(1)
		go func() { defer wg.Done(); do(i) }()
	}
	wg.Wait()
	return r.result()
}

type realEnv struct{ start time.Time }

func (e realEnv) now() time.Duration { return time.Since(e.start) }

func (realEnv) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
