// Command root uses the root module as a user does after
// `go get github.com/retrykit/retrykit`: package retry and policy for a
// call, retryhttp for a client whose requests retry, against a loopback
// server that fails twice before it answers.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryhttp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	p := policy.Constant(time.Millisecond).WithMaxAttempts(5)

	attempts := 0
	err := retry.Do(context.Background(), func(context.Context) error {
		if attempts++; attempts < 3 {
			return errors.New("connection refused")
		}
		return nil
	}, p)
	if err != nil || attempts != 3 {
		return fmt.Errorf("retry.Do = %v after %d attempts, want nil after 3", err, attempts)
	}
	fmt.Println("retry.Do succeeded on attempt", attempts)

	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	transport, err := retryhttp.New(http.DefaultTransport, p)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	resp, err := client.Get(srv.URL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || string(body) != "hello" || calls.Load() != 3 {
		return fmt.Errorf("GET = %d %q after %d requests, want 200 \"hello\" after 3", resp.StatusCode, body, calls.Load())
	}
	fmt.Printf("retryhttp: %d %s after %d requests\n", resp.StatusCode, body, calls.Load())
	return nil
}
