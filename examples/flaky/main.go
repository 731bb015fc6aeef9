// Command flaky shows retry.DoValue at work against a real, flaky
// dependency: a loopback TCP service that turns away its first connections
// while it warms up, called with the kubelet back-off scaled down from
// seconds to milliseconds.
//
//	go run ./examples/flaky
//
// It uses package net rather than net/http so that a fresh machine builds
// and runs it in seconds; examples/httpclient does the same over HTTP with
// retryhttp.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// failures is how many connections the service turns away before it is warm.
const failures = 4

func main() {
	log.SetFlags(0)
	warm, err := serve(func(n int) string {
		if n <= failures {
			return "BUSY warming up"
		}
		return "OK hello from a warm service"
	})
	if err != nil {
		log.Fatal(err)
	}

	// The kubelet's 10s ×2 capped at 300s, in milliseconds, and at most six
	// attempts (the first call counts).
	p := policy.Exponential(10 * time.Millisecond).WithCap(300 * time.Millisecond).WithMaxAttempts(6)
	fmt.Printf("policy: %v\n", p)

	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d failed after %v: %v; waiting %v\n", e.Attempt, e.Elapsed.Round(time.Millisecond), e.Err, e.Delay)
		},
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			fmt.Printf("done after %d attempts in %v: err = %v\n", e.Attempts, e.Elapsed.Round(time.Millisecond), e.Err)
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	answer, err := retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return ask(ctx, warm)
	}, p, hooks)
	if err != nil {
		log.Printf("gave up: %v", err)
		os.Exit(1)
	}
	fmt.Printf("answer: %s\n", answer)

	// The same call against a service that never warms up: the attempt limit
	// ends it, and the error keeps the service's last answer.
	down, err := serve(func(int) string { return "BUSY down for maintenance" })
	if err != nil {
		log.Fatal(err)
	}
	_, err = retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return ask(ctx, down)
	}, p.WithMaxAttempts(3))
	fmt.Printf("against a service that stays down:\n  %v\n  errors.Is(err, retry.ErrExhausted) = %v, errors.Is(err, errBusy) = %v\n",
		err, errors.Is(err, retry.ErrExhausted), errors.Is(err, errBusy))
}

// serve starts a line service on a loopback port: each connection gets one
// line, answer(n) for the n-th connection. It returns the service's address.
func serve(answer func(n int) string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		for n := 1; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, answer(n))
			c.Close()
		}
	}()
	return l.Addr().String(), nil
}

var errBusy = errors.New("service busy")

// ask connects to the service at addr and reads its answer: BUSY is worth
// retrying, anything but OK is not.
func ask(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if deadline, ok := ctx.Deadline(); ok {
		c.SetDeadline(deadline)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	status, text, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch status {
	case "OK":
		return text, nil
	case "BUSY":
		return "", fmt.Errorf("%s: %w", text, errBusy)
	}
	return "", retry.Permanent(fmt.Errorf("unexpected answer %q", line))
}
