// Command crashloop supervises a "container" that keeps crashing, the way
// the kubelet does: restart after a back-off that doubles from 10s to a cap
// of 300s, and start over at 10s once a run has stayed up for 10 minutes.
// Here the numbers are scaled down a thousandfold (seconds become
// milliseconds), so the whole story takes about two seconds.
//
//	go run ./examples/crashloop
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// scaled turns the kubelet's seconds into this demonstration's milliseconds.
func scaled(d time.Duration) time.Duration { return d / 1000 }

func main() {
	log.SetFlags(0)
	p := policy.Exponential(scaled(10 * time.Second)).WithCap(scaled(300 * time.Second)).
		WithResetRule(policy.ResetRule{AfterStableRun: scaled(10 * time.Minute)})
	fmt.Printf("policy: %v\n\n", p)

	// How long each run of the container stays up before it crashes: seven
	// quick crashes, one run longer than the stable window, then more quick
	// crashes.
	uptimes := []time.Duration{5, 5, 5, 5, 5, 5, 5, 700, 5, 5, 5}
	for i := range uptimes {
		uptimes[i] *= time.Millisecond
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			note := ""
			if e.StartedOver {
				note = "  (the last run was stable: back-off starts over)"
			}
			fmt.Printf("  back-off %v%s\n", e.Delay, note)
		},
	})
	err := retry.Loop(ctx, func(ctx context.Context) error {
		run := retry.Attempt(ctx) // every run is an attempt: 1, 2, 3, …
		if run > len(uptimes) {
			cancel() // the demonstration is over: stop supervising
			return ctx.Err()
		}
		up := uptimes[run-1]
		fmt.Printf("run %2d at %5v: up for %v, ", run, time.Since(start).Round(time.Millisecond), up)
		err := container(ctx, up)
		fmt.Printf("then %v\n", err)
		return err
	}, p, hooks)
	fmt.Printf("\nsupervisor stopped: %v\n", err)
	if !errors.Is(err, context.Canceled) {
		os.Exit(1)
	}
}

// container runs a real process that exits with status 1 after up.
func container(ctx context.Context, up time.Duration) error {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), "CRASHLOOP_CHILD="+up.String())
	return cmd.Run()
}

func init() {
	// The child: stay up for the given time, then crash.
	if up := os.Getenv("CRASHLOOP_CHILD"); up != "" {
		d, err := time.ParseDuration(up)
		if err != nil {
			os.Exit(2)
		}
		time.Sleep(d)
		os.Exit(1)
	}
}
