// Command storm shows a retry storm and the guard that prevents it. On a
// virtual clock, 800 calls a second for 40 s meet a server that serves 1,000
// a second, one at a time, and stalls for 2 s at t = 5 s. Each attempt times
// out after 1 s (the server still spends its 1 ms on it) and clients retry
// from 100 ms, doubling, capped at 2 s, jittered, at most 4 attempts. It
// prints each client's goodput second by second, when it recovered, and how
// many attempts a call cost; then the same clients against a server that
// fails one attempt in ten, and against one that is down.
//
//	go run ./examples/storm
//	go run ./examples/storm -svg docs/storm.svg   # also draw the storm as an SVG chart
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/internal/storm"
)

// results holds one client's runs.
type results struct {
	client                  storm.Client
	stormed, sporadic, down storm.Result
	downByTimeout           storm.Result
	recovered               time.Duration
	recoveredOK             bool
}

func main() {
	svg := flag.String("svg", "", "also write the storm's goodput chart to this SVG `file`")
	flag.Parse()
	log.SetFlags(0)

	s := storm.Storm()
	stallEnd := s.StallAt + s.Stall
	clients := storm.Clients()
	all := make([]results, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			r := results{client: c}
			r.stormed = storm.RunVirtual(s, c.New())
			r.recovered, r.recoveredOK = r.stormed.Recovered(stallEnd, 0.95)
			r.sporadic = storm.RunVirtual(storm.Sporadic(), c.New())
			r.down = storm.RunVirtual(storm.Down(storm.FastOutage), c.New())
			r.downByTimeout = storm.RunVirtual(storm.Down(storm.SlowOutage), c.New())
			all[i] = r
		})
	}
	wg.Wait()

	fmt.Printf("Storm: %d calls/s for %v; the server serves 1,000/s and stalls %v at t = %v.\n", s.Rate, s.Duration, s.Stall, s.StallAt)
	fmt.Println("Goodput, one character per second of arrivals (█ at least 7/8 of the calls succeed, ▁ under 1/8, blank none):")
	fmt.Println()
	const name = 20
	axis := []byte(strings.Repeat(" ", len(all[0].stormed.Goodput)))
	for sec := 0; sec < len(axis); sec += 10 {
		copy(axis[sec:], fmt.Sprintf("%ds", sec))
	}
	fmt.Printf("%-*s  %s\n", name, "", axis)
	for _, r := range all {
		fmt.Printf("%-*s  %s  %s\n", name, r.client.Name, bars(r.stormed.Goodput), recovery(r))
	}
	fmt.Println()
	fmt.Printf("%-*s  %9s  %8s  %8s  %8s  %9s  %9s\n", name, "", "recovered", "storm", "storm", "sporadic", "down", "down")
	fmt.Printf("%-*s  %9s  %8s  %8s  %8s  %9s  %9s\n", name, "client", "after", "success", "att/call", "success", "att/call", "att/call")
	fmt.Printf("%-*s  %9s  %8s  %8s  %8s  %9s  %9s\n", name, "", "the stall", "", "", "10% fail", "(fast)", "(timeout)")
	for _, r := range all {
		fmt.Printf("%-*s  %9s  %7.2f%%  %8.3f  %7.2f%%  %9.4f  %9.4f\n", name, r.client.Name, recovery(r),
			100*r.stormed.Success(), r.stormed.Amplification(), 100*r.sporadic.Success(), r.down.Amplification(), r.downByTimeout.Amplification())
	}
	fmt.Println()
	fmt.Println("The guard closes after a few failures and opens again on successes, so the stall")
	fmt.Println("ends as it would for a client that never retries, while sporadic failures keep")
	fmt.Println("their retries. A ratio budget counts volume, not failures: it lets retries pile up")
	fmt.Println("during the stall (10%), or enough of them to keep the server buried (20% +10/s).")

	if *svg != "" {
		if err := os.WriteFile(*svg, chart(all, s), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nwrote %s\n", *svg)
	}
}

func recovery(r results) string {
	if !r.recoveredOK {
		return "never"
	}
	return r.recovered.String()
}

// bars draws one character per second.
func bars(goodput []float64) string {
	const levels = "▁▂▃▄▅▆▇█"
	blocks := []rune(levels)
	var b strings.Builder
	for _, g := range goodput {
		switch {
		case g <= 0:
			b.WriteRune(' ')
		default:
			b.WriteRune(blocks[min(int(g*float64(len(blocks))), len(blocks)-1)])
		}
	}
	return b.String()
}
