package pgtest_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrysql"
)

// The contention load: workers goroutines make transfers between a few hot
// accounts under SERIALIZABLE.
const (
	workers  = 16
	perGo    = 200 // transfers per goroutine in TestContention
	accounts = 10
	opening  = 1000 // each account's opening balance
)

// Two ways to retry the load: retrykit's jittered exponential back-off, and
// crdb.ExecuteTx's immediate retry (no wait at all). Both give up after 100
// attempts, which the load never reached in the runs recorded in
// BENCHMARKS.md.
var (
	loadJittered = policy.Exponential(time.Millisecond).WithCap(100 * time.Millisecond).
			WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxAttempts(100)
	loadImmediate = policy.Constant(0).WithMaxAttempts(100)
)

func setupAccounts(tb testing.TB, db *sql.DB) {
	tb.Helper()
	execSQL(tb, db, `DROP TABLE IF EXISTS transfer, account`,
		`CREATE TABLE account (id int PRIMARY KEY, balance int NOT NULL)`,
		`CREATE TABLE transfer (id int PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount int NOT NULL)`,
		`INSERT INTO account SELECT g, 1000 FROM generate_series(1, 10) g`)
}

// transfer moves amount from src to dst, reading the source balance and
// writing it back computed, as application code often does: run at a
// weaker isolation, concurrent transfers would lose updates.
func transfer(ctx context.Context, tx *sql.Tx, id, src, dst, amount int) error {
	var balance int
	if err := tx.QueryRowContext(ctx, `SELECT balance FROM account WHERE id = $1`, src).Scan(&balance); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE account SET balance = $2 WHERE id = $1`, src, balance-amount); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE account SET balance = balance + $2 WHERE id = $1`, dst, amount); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO transfer VALUES ($1, $2, $3, $4)`, id, src, dst, amount)
	return err
}

// loadResult is what a load run measured.
type loadResult struct {
	transfers, attempts int
	failed              []error
	elapsed             time.Duration
}

func (r loadResult) retriesPerTx() float64 {
	return float64(r.attempts-r.transfers) / float64(r.transfers)
}

func (r loadResult) perSecond() float64 { return float64(r.transfers) / r.elapsed.Seconds() }

// runLoad makes n transfers (ids 0 to n-1) from workers goroutines under p.
func runLoad(ctx context.Context, db *sql.DB, p policy.Policy, n int) loadResult {
	var (
		next, attempts atomic.Int64
		mu             sync.Mutex
		failed         []error
		wg             sync.WaitGroup
	)
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 42))
			for {
				id := int(next.Add(1) - 1)
				if id >= n {
					return
				}
				src := 1 + rnd.IntN(accounts)
				dst := 1 + (src+rnd.IntN(accounts-1))%accounts // never src
				amount := 1 + rnd.IntN(10)
				err := retrysql.Tx(ctx, db, serializable, func(ctx context.Context, tx *sql.Tx) error {
					attempts.Add(1)
					return transfer(ctx, tx, id, src, dst, amount)
				}, p)
				if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return loadResult{transfers: n, attempts: int(attempts.Load()), failed: failed, elapsed: time.Since(start)}
}

// TestContention runs 16 goroutines × 200 transfers between 10 accounts
// under SERIALIZABLE with retrykit's jittered back-off: every transfer
// lands exactly once, no money appears or vanishes, and each balance is its
// opening balance plus what the transfer table says came in and went out.
func TestContention(t *testing.T) {
	db := openDB(t, needServer(t).DSN())
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	setupAccounts(t, db)
	// Usually 15 to 20 s with -race here; the bound is for a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := workers * perGo
	r := runLoad(ctx, db, loadJittered, n)
	require.Empty(t, r.failed)
	t.Logf("%d transfers in %v: %.0f/s, %.2f retries per transfer", n, r.elapsed.Round(time.Millisecond), r.perSecond(), r.retriesPerTx())

	require.Equal(t, n, count(t, db, `SELECT count(*) FROM transfer`))
	require.Equal(t, 0, count(t, db, `SELECT min(id) FROM transfer`))
	require.Equal(t, n-1, count(t, db, `SELECT max(id) FROM transfer`)) // with the primary key: each id exactly once
	require.Equal(t, accounts*opening, count(t, db, `SELECT sum(balance) FROM account`))
	require.Equal(t, 0, count(t, db, `
		SELECT count(*) FROM account a
		WHERE a.balance <> 1000
			- coalesce((SELECT sum(amount) FROM transfer WHERE src = a.id), 0)
			+ coalesce((SELECT sum(amount) FROM transfer WHERE dst = a.id), 0)`))
	require.Greater(t, r.attempts, n, "the load caused no retry at all: it tests nothing")
}

// BenchmarkContention runs b.N transfers of the contention load, retried by
// retrykit's jittered back-off and by immediate retry. Run it with
// -benchtime 3200x for TestContention's 16 × 200.
func BenchmarkContention(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    policy.Policy
	}{
		{"retry=jittered", loadJittered},
		{"retry=immediate", loadImmediate},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db := openDB(b, needServer(b).DSN())
			db.SetMaxOpenConns(workers)
			db.SetMaxIdleConns(workers) // the default 2 would close and reopen connections while workers wait
			setupAccounts(b, db)
			b.ReportAllocs()
			b.ResetTimer()
			r := runLoad(context.Background(), db, bc.p, b.N)
			b.StopTimer()
			b.ReportMetric(r.perSecond(), "tx/s")
			b.ReportMetric(r.retriesPerTx(), "retries/tx")
			b.ReportMetric(float64(len(r.failed)), "gave-up")
			b.ReportMetric(float64(db.Stats().MaxIdleClosed+db.Stats().MaxLifetimeClosed), "conns-closed")
			if sum := count(b, db, `SELECT sum(balance) FROM account`); sum != accounts*opening {
				b.Fatalf("total balance %d, want %d", sum, accounts*opening)
			}
		})
	}
}
