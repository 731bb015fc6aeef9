package main

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// script is what the receiver answers to the successive requests of one
// delivery; the last answer repeats. 429 comes with Retry-After: 1.
var script = map[string][]int{
	"evt-01": {200},
	"evt-02": {503, 200},
	"evt-03": {503, 503, 200},
	"evt-04": {429, 200},
	"evt-05": {200},
	"evt-06": {503, 200},
	"evt-07": {503, 503, 200},
	"evt-08": {429, 200},
	"evt-09": {503, 200},
	"evt-10": {410}, // the subscriber removed this endpoint
}

// receiver is a flaky webhook endpoint on loopback. It recognises a
// delivery by its Idempotency-Key and processes it once, however often it
// arrives.
type receiver struct {
	tl        *timeline
	mu        sync.Mutex
	requests  map[string]int
	processed map[string]int // 1 for a delivery processed; more would be a duplicate
}

func newReceiver(tl *timeline) *receiver {
	return &receiver{tl: tl, requests: map[string]int{}, processed: map[string]int{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	id := r.Header.Get("Idempotency-Key")
	rc.mu.Lock()
	rc.requests[id]++
	n := rc.requests[id]
	answers := script[id]
	status := http.StatusNotFound
	if len(answers) > 0 {
		status = answers[min(n, len(answers))-1]
	}
	note := ""
	if status == http.StatusOK {
		if rc.processed[id]++; rc.processed[id] > 1 {
			note = " (a duplicate: acknowledged, not processed again)"
		}
	}
	rc.mu.Unlock()
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	rc.tl.printf("receiver: %s request %d -> %d %s%s", id, n, status, http.StatusText(status), note)
}

// counts returns the deliveries processed, the duplicates among the
// requests that succeeded, and the requests in all.
func (rc *receiver) counts() (processed, duplicates, requests int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, n := range rc.processed {
		processed++
		duplicates += n - 1
	}
	for _, n := range rc.requests {
		requests += n
	}
	return processed, duplicates, requests
}

// timeline prints lines stamped with the time since it started.
type timeline struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

func (tl *timeline) printf(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(tl.out, "%6.2fs  %s\n", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...))
}
