package layers

import (
	"slices"
	"sync"
	"time"
)

// Sequential is the leaf-down scenario: the leaf answers every request 503
// and 20 user requests are made one after another, every guard full at
// the start.
type Sequential struct {
	Attempts []int64         // the leaf's attempts for each user request
	Times    []time.Duration // each user request's time to its answer
}

// Max returns the most leaf attempts of one request.
func (s Sequential) Max() int64 { return slices.Max(s.Attempts) }

// Mean returns the leaf attempts per request, on average.
func (s Sequential) Mean() float64 {
	var n int64
	for _, a := range s.Attempts {
		n += a
	}
	return float64(n) / float64(len(s.Attempts))
}

// P99 returns the 99th percentile of the times to an answer.
func (s Sequential) P99() time.Duration {
	t := slices.Clone(s.Times)
	slices.Sort(t)
	return t[min(len(t)-1, len(t)*99/100)]
}

// LeafDown runs the Sequential scenario.
func LeafDown(net Net, m Mode) (Sequential, error) {
	ch, err := newChain(net, m)
	if err != nil {
		return Sequential{}, err
	}
	defer ch.close()
	ch.leaf.state.Store(down)
	var s Sequential
	for range 20 {
		before, start := ch.leaf.attempts.Load(), time.Now()
		ch.call()
		s.Times = append(s.Times, time.Since(start))
		s.Attempts = append(s.Attempts, ch.leaf.attempts.Load()-before)
	}
	return s, nil
}

// request is one user request of an open-loop run.
type request struct {
	start, end time.Duration // from the start of the run
	ok         bool
}

// Run is the record of an open-loop run.
type Run []request

// Success returns the share of requests that succeeded.
func (r Run) Success() float64 {
	n := 0
	for _, q := range r {
		if q.ok {
			n++
		}
	}
	return float64(n) / float64(len(r))
}

// LastFailure returns how long after at the last failed request ended, 0
// if none ended after at.
func (r Run) LastFailure(at time.Duration) time.Duration {
	var last time.Duration
	for _, q := range r {
		if !q.ok && q.end > at {
			last = max(last, q.end-at)
		}
	}
	return last
}

// FailedFrom returns the failed requests that started at or after at.
func (r Run) FailedFrom(at time.Duration) int {
	n := 0
	for _, q := range r {
		if !q.ok && q.start >= at {
			n++
		}
	}
	return n
}

// Recovered returns how long after at the run recovered: the start of the
// first 100 ms window from which every window of requests started at or
// after it has 95 % success.
func (r Run) Recovered(at time.Duration) time.Duration {
	const w = 100 * time.Millisecond
	var oks, all []int
	for _, q := range r {
		if q.start < at {
			continue
		}
		i := int((q.start - at) / w)
		for len(all) <= i {
			oks, all = append(oks, 0), append(all, 0)
		}
		all[i]++
		if q.ok {
			oks[i]++
		}
	}
	rec := 0
	for i := range all {
		if all[i] > 0 && float64(oks[i]) < 0.95*float64(all[i]) {
			rec = i + 1
		}
	}
	return time.Duration(rec) * w
}

// openLoop makes user requests at rate a second for d, whatever the answers,
// calling event at each offset of events as its time comes, and returns the
// record.
func openLoop(ch *chain, rate int, d time.Duration, events map[time.Duration]func()) Run {
	var (
		mu  sync.Mutex
		run Run
		wg  sync.WaitGroup
	)
	start := time.Now()
	every := time.Second / time.Duration(rate)
	offsets := make([]time.Duration, 0, len(events))
	for at := range events {
		offsets = append(offsets, at)
	}
	slices.Sort(offsets)
	for i := 0; time.Duration(i)*every < d; i++ {
		at := time.Duration(i) * every
		for len(offsets) > 0 && offsets[0] <= at {
			events[offsets[0]]()
			offsets = offsets[1:]
		}
		time.Sleep(time.Until(start.Add(at)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Since(start)
			ok := ch.call()
			mu.Lock()
			run = append(run, request{start: s, end: time.Since(start), ok: ok})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return run
}

// Outage: 50 user requests a second for 13 s; the leaf is down from 1 s to
// 11 s.
func Outage(net Net, m Mode) (Run, error) {
	ch, err := newChain(net, m)
	if err != nil {
		return nil, err
	}
	defer ch.close()
	return openLoop(ch, 50, 13*time.Second, map[time.Duration]func(){
		time.Second:      func() { ch.leaf.state.Store(down) },
		11 * time.Second: func() { ch.leaf.state.Store(healthy) },
	}), nil
}

// OutageReturn is when the leaf of Outage is back.
const OutageReturn = 11 * time.Second

// Partial: 200 user requests a second for 10 s; the leaf fails a third of
// its requests at random.
func Partial(net Net, m Mode) (Run, error) {
	ch, err := newChain(net, m)
	if err != nil {
		return nil, err
	}
	defer ch.close()
	ch.leaf.state.Store(partial)
	return openLoop(ch, 200, 10*time.Second, nil), nil
}

// Overload: 200 user requests a second for 12 s; from 2 s to 7 s the leaf
// serves each request for 40 ms, four at a time: 100 a second.
func Overload(net Net, m Mode) (Run, error) {
	ch, err := newChain(net, m)
	if err != nil {
		return nil, err
	}
	defer ch.close()
	return openLoop(ch, 200, 12*time.Second, map[time.Duration]func(){
		2 * time.Second: func() { ch.leaf.service.Store(int64(40 * time.Millisecond)) },
		OverloadEnd:     func() { ch.leaf.service.Store(int64(serviceTime)) },
	}), nil
}

// OverloadEnd is when the leaf of Overload serves as fast as before.
const OverloadEnd = 7 * time.Second

// MidRefuses: 100 user requests a second for 8 s; from 2 s to 4 s the mid
// drops every connection before its handler.
func MidRefuses(net Net, m Mode) (Run, error) {
	ch, err := newChain(net, m)
	if err != nil {
		return nil, err
	}
	defer ch.close()
	return openLoop(ch, 100, 8*time.Second, map[time.Duration]func(){
		2 * time.Second: func() { ch.gate.refusing.Store(true) },
		4 * time.Second: func() { ch.gate.refusing.Store(false) },
	}), nil
}
