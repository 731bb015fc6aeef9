// Command storm compares retry admission in every scenario of the guard's
// goals, on a virtual clock: 800 calls a second for 40 s meet a server that
// serves 1,000 a second, one at a time; each attempt times out after 1 s
// (the server still spends its 1 ms on it) and clients retry from 100 ms,
// doubling, capped at 2 s, jittered, at most 4 attempts. The server stalls
// for 2 s (storm) or for 100 to 800 ms (short stalls, shorter than the
// attempt timeout), slows below the load for 4 s (overload), fails a share of
// attempts at random (sporadic, partial), fails everything for 60 ms after
// 20 s of health (blip), or is down for good; and a fleet of 1,000 calls
// rides out a 10 s outage. It prints the goodput of the storm and the
// overload second by second, then one table of every scenario.
//
//	go run ./examples/storm
//	go run ./examples/storm -svg docs/storm.svg   # also draw the figures as an SVG chart
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

// cell is one client's run of one scenario.
type cell struct {
	scenario storm.Scenario
	client   storm.Client
	result   storm.Result
}

// trouble returns when a scenario's stall or slowdown ends, from which its
// recovery counts.
func trouble(s storm.Scenario) time.Duration {
	if s.Stall > 0 {
		return s.StallAt + s.Stall
	}
	return s.SlowAt + s.SlowOf
}

// measure says how a scenario is judged, and returns a client's figure.
func measure(c cell) string {
	s, r := c.scenario, c.result
	switch {
	case s.Stall > 0 && s.Stall < storm.AttemptTimeout:
		return fmt.Sprintf("%d lost", r.Lost())
	case s.Stall > 0 || s.SlowOf > 0:
		after, ok := r.Recovered(trouble(s), 0.95)
		if !ok {
			return "never"
		}
		return after.String()
	case s.Name == "blip":
		return fmt.Sprintf("%d lost", r.Lost())
	case s.Name == "fleet outage":
		if c.client.Name == "no retry" {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%, p99 %.1fs", 100*r.Success(), r.EndQuantile(0.99, storm.FleetDown).Seconds())
	case s.Outage != storm.NoOutage:
		return fmt.Sprintf("%.4f att/call", r.Amplification())
	default:
		return fmt.Sprintf("%.2f%%", 100*r.Success())
	}
}

// goal says what the guard must reach in a scenario.
var goal = map[string]string{
	"storm":           "recovered ≤ 1s",
	"stall 100ms":     "≤ no retry + 1%",
	"stall 300ms":     "≤ no retry + 1%",
	"stall 500ms":     "≤ no retry + 1%",
	"stall 800ms":     "measured",
	"overload":        "recovered ≤ 1s after no retry",
	"sporadic 10%":    "≥ 99.9% succeed",
	"partial 20%":     "≥ plain − 0.5 pp",
	"partial 30%":     "≥ plain − 0.5 pp",
	"partial 33%":     "≥ plain − 0.5 pp",
	"partial 40%":     "≥ plain − 1 pp",
	"blip":            "≤ plain's losses",
	"fleet outage":    "100%, p99 ≤ plain + 10%",
	"down":            "≤ 1.1 att/call",
	"down by timeout": "≤ 1.1 att/call",
}

func main() {
	svg := flag.String("svg", "", "also write the figures as an SVG chart to this `file`")
	flag.Parse()
	log.SetFlags(0)

	scenarios := []storm.Scenario{storm.Storm(), storm.Overload(),
		storm.ShortStall(100 * time.Millisecond), storm.ShortStall(300 * time.Millisecond),
		storm.ShortStall(500 * time.Millisecond), storm.ShortStall(800 * time.Millisecond),
		storm.Sporadic(), storm.Partial(0.2), storm.Partial(0.3),
		storm.Partial(1.0 / 3), storm.Partial(0.4), storm.Blip(), storm.FleetOutage(), storm.Down(storm.FastOutage), storm.Down(storm.SlowOutage)}
	clients := storm.Clients()
	table := make([][]cell, len(scenarios))
	var wg sync.WaitGroup
	for i, s := range scenarios {
		table[i] = make([]cell, len(clients))
		for j, c := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); table[i][j] = cell{s, c, storm.RunVirtual(s, c.For(s))} }()
		}
	}
	wg.Wait()

	for _, row := range table[:2] {
		s := row[0].scenario
		fmt.Printf("%s: goodput per second of arrivals (█ at least 7/8 of the calls succeed, ▁ under 1/8, blank none)\n", s.Name)
		for _, c := range row {
			fmt.Printf("  %-18s %s  %s\n", c.client.Name, bars(c.result.Goodput), measure(c))
		}
		fmt.Println()
	}
	fmt.Printf("%-16s", "scenario")
	for _, c := range clients {
		fmt.Printf("  %-18s", c.Name)
	}
	fmt.Printf("  %s\n", "the guard's goal")
	for _, row := range table {
		fmt.Printf("%-16s", row[0].scenario.Name)
		for _, c := range row {
			fmt.Printf("  %-18s", measure(c))
		}
		fmt.Printf("  %s\n", goal[row[0].scenario.Name])
	}
	fmt.Println()
	fmt.Println("storm, overload: time to recover after the trouble ends; short stalls, blip: calls lost;")
	fmt.Println("sporadic, partial: calls that succeed; fleet: calls that succeed, and the 99th percentile")
	fmt.Println("of their end after the outage; down: attempts per call. The guard admits retries while")
	fmt.Println("they pay off and holds them back while they only add load: it rides out failures that")
	fmt.Println("retries cure as plain retries do. While the server answers nothing but timeouts it holds")
	fmt.Println("new calls back too, so it recovers from a storm sooner than a client that never retries.")

	if *svg != "" {
		if err := os.WriteFile(*svg, chart(table), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nwrote %s\n", *svg)
	}
}

// bars draws one character per second.
func bars(goodput []float64) string {
	blocks := []rune("▁▂▃▄▅▆▇█")
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
