package riversuite_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/retrykit/retrykit/retrysql/pgtest"
)

// server is the package's throwaway cluster, shared by its tests, or nil
// with startErr saying why. Its database template holds River's tables.
var (
	server   *pgtest.Server
	startErr error
)

func TestMain(m *testing.M) {
	if url := os.Getenv(workerEnv); url != "" { // a worker process of TestKilledWorker
		os.Exit(runWorkerProcess(url))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	server, startErr = pgtest.Start(ctx)
	if startErr == nil {
		if startErr = migrateTemplate(ctx); startErr != nil {
			_ = server.Stop()
			server = nil
		}
	}
	cancel()
	code := m.Run()
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
