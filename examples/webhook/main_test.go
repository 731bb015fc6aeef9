package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrysql/pgtest"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(workerEnv); s != "" { // run's worker processes are this binary
		if err := work(os.Getenv("DATABASE_URL"), s); err != nil {
			fmt.Fprintln(os.Stderr, "webhook worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWebhook runs the program against a throwaway PostgreSQL cluster.
// Without the server programs it is skipped, and fails with CI=true.
func TestWebhook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, err := pgtest.Start(ctx)
	if err != nil {
		if v := os.Getenv("CI"); v == "true" || v == "1" {
			t.Fatalf("CI=%s: this test must run against PostgreSQL: %v", v, err)
		}
		t.Skipf("no PostgreSQL server for this test (%v)", err)
	}
	defer func() { require.NoError(t, server.Stop()) }()

	var out bytes.Buffer
	err = run(ctx, server.URL(), &out)
	t.Log("\n" + out.String())
	require.NoError(t, err)
	require.Contains(t, out.String(), "SIGKILL worker 1")
	require.Contains(t, out.String(), "worker 2 (pid")
	require.Contains(t, out.String(), "the receiver processed 9 deliveries")
	require.Contains(t, out.String(), "0 duplicates")
	require.Regexp(t, `evt-10 +cancelled +1 `, out.String())
	require.Regexp(t, `evt-04 +completed +1 +1\n`, out.String(), "the 429's Retry-After became a snooze")
}
