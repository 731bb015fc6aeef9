// Command flaky shows retry.DoValue at work against a real, flaky
// dependency: a loopback TCP service that answers BUSY to its first
// connections while it warms up, called with the kubelet back-off scaled
// down from seconds to milliseconds.
//
//	go run ./examples/flaky
//
// It uses package net rather than net/http, which makes its first build on a
// fresh machine about twice as fast; examples/httpclient does the same over
// HTTP with retryhttp.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// failures is how many connections the service answers BUSY before it is
// warm.
const failures = 4

func main() {
	log.SetFlags(0)
	if err := run(); err != nil {
		log.Fatalf("gave up: %v", err)
	}
}

func run() error {
	warm, err := serve(func(n int) string {
		if n <= failures {
			return "BUSY warming up"
		}
		return "OK hello from a warm service"
	})
	if err != nil {
		return err
	}
	defer warm.Close()

	// The kubelet's 10s ×2 capped at 300s, in milliseconds; at most six
	// attempts (the first attempt counts), each of them cut off after 100ms.
	p := policy.Exponential(10 * time.Millisecond).WithCap(300 * time.Millisecond).
		WithMaxAttempts(6).WithAttemptTimeout(100 * time.Millisecond)
	fmt.Printf("policy: %v\n", p)

	hooks := retry.WithHooks(&retry.Hooks{
		OnRetry: func(_ context.Context, e retry.RetryEvent) {
			fmt.Printf("attempt %d failed after %v: %v; waiting %v\n", e.Attempt, e.Elapsed.Round(time.Millisecond), e.Err, e.Delay)
		},
		OnDone: func(_ context.Context, e retry.DoneEvent) {
			fmt.Printf("done after %d attempts in %v: err = %v\n", e.Attempts, e.Elapsed.Round(time.Millisecond), e.Err)
		},
	})

	// Ctrl-C ends the call at once, with the last error kept.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	answer, err := retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return ask(ctx, warm.Addr().String())
	}, p, hooks)
	if err != nil {
		return err
	}
	fmt.Printf("answer: %s\n", answer)

	// The same call against a service that never warms up: the attempt limit
	// ends it, and the error keeps the service's last answer.
	down, err := serve(func(int) string { return "BUSY down for maintenance" })
	if err != nil {
		return err
	}
	defer down.Close()
	_, err = retry.DoValue(ctx, func(ctx context.Context) (string, error) {
		return ask(ctx, down.Addr().String())
	}, p.WithMaxAttempts(3))
	fmt.Printf("against a service that stays down:\n  %v\n  errors.Is(err, retry.ErrExhausted) = %v, errors.Is(err, errBusy) = %v\n",
		err, errors.Is(err, retry.ErrExhausted), errors.Is(err, errBusy))
	return nil
}

// serve starts a line service on a loopback port: it answers each
// connection with one line, answer(n) for the n-th, and hangs up. It serves
// until the listener it returns is closed.
func serve(answer func(n int) string) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for n := 1; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			fmt.Fprintln(c, answer(n))
			c.Close()
		}
	}()
	return l, nil
}

var errBusy = errors.New("service busy")

// ask connects to the service at addr and reads its answer: BUSY is worth
// retrying, anything but OK is not. It gives up when ctx is done, which is
// when the policy's attempt timeout cuts the attempt off.
func ask(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// A connection knows nothing of contexts: a context that ends makes its
	// reads fail at once.
	defer context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the answer of %s: %w", addr, err)
	}
	status, text, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch status {
	case "OK":
		return text, nil
	case "BUSY":
		return "", fmt.Errorf("%s: %w", text, errBusy)
	}
	return "", retry.Permanent(fmt.Errorf("unexpected answer %q", strings.TrimSpace(line)))
}
