package storm

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// Virtual is a discrete-event clock for a [policy.Policy] (WithClock): time
// moves only from one scheduled event to the next, and only when the one
// goroutine it let run has parked again, waiting on the clock or done. So a
// run is deterministic and takes as long as its events do, not as long as
// its timeline.
//
// Every goroutine that runs under it must block on nothing but its After
// channels, and each woken goroutine must park again (call After, or finish
// by the function Go wraps) before anything else happens. retry.Do with a
// background context and this clock's WithTimeout does.
type Virtual struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	events events
	parked chan struct{}
}

// NewVirtual returns a virtual clock reading start.
func NewVirtual(start time.Time) *Virtual {
	return &Virtual{now: start, parked: make(chan struct{})}
}

var _ policy.Clock = (*Virtual)(nil)

// Now returns the virtual time.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// After returns a channel that receives the time d from now, and parks the
// caller: it must wait on the channel next.
func (v *Virtual) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	v.mu.Lock()
	v.schedule(v.now.Add(max(d, 0)), event{ch: ch})
	v.mu.Unlock()
	v.parked <- struct{}{}
	return ch
}

// WithTimeout returns a context that times out d from now on the virtual
// clock. Waiting on its Done channel does not park a goroutine: wait with
// After until the deadline.
func (v *Virtual) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	t := &timeoutContext{Context: ctx}
	v.mu.Lock()
	t.deadline = v.now.Add(d)
	v.schedule(t.deadline, event{fire: func() { t.timedOut.Store(true); cancel() }})
	v.mu.Unlock()
	return t, cancel
}

type timeoutContext struct {
	context.Context
	deadline time.Time
	timedOut atomic.Bool
}

func (t *timeoutContext) Deadline() (time.Time, bool) { return t.deadline, true }

func (t *timeoutContext) Err() error {
	if t.timedOut.Load() {
		return context.DeadlineExceeded
	}
	return t.Context.Err()
}

// Go schedules f to run in a goroutine of its own at time at.
func (v *Virtual) Go(at time.Time, f func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.schedule(at, event{start: f})
}

// Run runs every event in time order until none is left. Call it from one
// goroutine, after scheduling the first.
func (v *Virtual) Run() {
	for {
		v.mu.Lock()
		if len(v.events) == 0 {
			v.mu.Unlock()
			return
		}
		e := heap.Pop(&v.events).(event)
		v.now = e.at
		v.mu.Unlock()
		switch {
		case e.fire != nil:
			e.fire()
			continue
		case e.ch != nil:
			e.ch <- e.at
		default:
			go func() {
				e.start()
				v.parked <- struct{}{}
			}()
		}
		<-v.parked
	}
}

// schedule adds e at time at; v.mu is held.
func (v *Virtual) schedule(at time.Time, e event) {
	v.seq++
	e.at, e.seq = at, v.seq
	heap.Push(&v.events, e)
}

type event struct {
	at    time.Time
	seq   uint64         // ties run in the order they were scheduled
	ch    chan time.Time // wake the goroutine waiting on it
	fire  func()         // or run this, inline
	start func()         // or start this goroutine
}

type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// RunVirtual runs s with the policy p on a [Virtual] clock. It replaces p's
// clock and its jitter's random source (seeded from s.Seed), so that a run
// is deterministic.
func RunVirtual(s Scenario, p policy.Policy) Result {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	v := NewVirtual(start)
	r := newRun(s, p.WithClock(v).WithRandom(rand.NewPCG(s.Seed, 0x5eed)), virtualEnv{v, start})
	if s.Callers > 0 {
		for c := range s.Callers {
			v.Go(start, func() { r.caller(c, r.call, func(d time.Duration) { <-v.After(d) }) })
		}
		v.Run()
		return r.result()
	}
	var arrive func(i int)
	arrive = func(i int) {
		if i+1 < len(r.ok) {
			v.Go(start.Add(r.arrival(i+1)), func() { arrive(i + 1) })
		}
		r.call(i)
	}
	v.Go(start, func() { arrive(0) })
	v.Run()
	return r.result()
}

type virtualEnv struct {
	v     *Virtual
	start time.Time
}

func (e virtualEnv) now() time.Duration { return e.v.Now().Sub(e.start) }

// wait parks until d has passed or ctx's deadline, whichever is first. A
// deadline's event was scheduled before the wait's, so at a tie the context
// is done first, as it is when the timeout and the answer race on a real
// clock and the timeout wins.
func (e virtualEnv) wait(ctx context.Context, d time.Duration) error {
	at := e.v.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(at) {
		at = dl
	}
	<-e.v.After(at.Sub(e.v.Now()))
	return ctx.Err()
}
