// Command sqltx moves money between two accounts from several goroutines
// at once, under SERIALIZABLE isolation, with retrysql.Tx: PostgreSQL aborts
// the transactions that overlap (SQLSTATE 40001) and they run again after a
// jittered back-off, until every transfer has landed exactly once. It needs
// a real server, named by DATABASE_URL:
//
//	DATABASE_URL='postgres://postgres@localhost:5432/postgres?sslmode=disable' go run ./examples/sqltx
//
// Without DATABASE_URL it says how to start one, and exits.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retrysql"
)

const (
	workers   = 4
	transfers = 5 // per worker
	opening   = 100
)

func main() {
	log.SetFlags(0)
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		fmt.Println("sqltx: set DATABASE_URL to a PostgreSQL server, for example: docker run -d --rm -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:17 && DATABASE_URL='postgres://postgres@localhost:5432/postgres?sslmode=disable' go run ./examples/sqltx")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, url); err != nil {
		log.Fatalf("sqltx: %v", err)
	}
}

func run(ctx context.Context, url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range []string{
		`DROP TABLE IF EXISTS retrykit_example_account`,
		`CREATE TABLE retrykit_example_account (id int PRIMARY KEY, balance int NOT NULL)`,
		fmt.Sprintf(`INSERT INTO retrykit_example_account VALUES (1, %d), (2, %d)`, opening, opening),
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	defer func() { _, _ = db.ExecContext(context.Background(), `DROP TABLE retrykit_example_account`) }()

	// 2 ms doubling to 100 ms, full jitter, at most 10 attempts (the first
	// counts).
	p := policy.Exponential(2 * time.Millisecond).WithCap(100 * time.Millisecond).
		WithJitter(backoff.Jitter{Kind: backoff.Full}).WithMaxAttempts(10)
	fmt.Printf("policy: %v\n", p)
	var retries atomic.Int32
	hooks := retrysql.WithRetryOptions(retry.WithHooks(&retry.Hooks{OnRetry: func(_ context.Context, e retry.RetryEvent) {
		retries.Add(1)
		fmt.Printf("  attempt %d failed with SQLSTATE %s; again in %v\n", e.Attempt, retrysql.SQLState(e.Err), e.Delay.Round(100*time.Microsecond))
	}}))
	serializable := &sql.TxOptions{Isolation: sql.LevelSerializable}

	var wg sync.WaitGroup
	errs := make(chan error, workers*transfers)
	for w := range workers {
		wg.Go(func() {
			for i := range transfers {
				src, dst := 1+(w+i)%2, 2-(w+i)%2
				err := retrysql.Tx(ctx, db, serializable, func(ctx context.Context, tx *sql.Tx) error {
					var balance int
					if err := tx.QueryRowContext(ctx, `SELECT balance FROM retrykit_example_account WHERE id = $1`, src).Scan(&balance); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `UPDATE retrykit_example_account SET balance = $2 WHERE id = $1`, src, balance-10); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE retrykit_example_account SET balance = balance + 10 WHERE id = $1`, dst)
					return err
				}, p, hooks)
				if err != nil {
					errs <- fmt.Errorf("transfer %d of worker %d: %w", i, w, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		failed = append(failed, err)
	}
	if err := errors.Join(failed...); err != nil {
		return err
	}

	var a, b int
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT balance FROM retrykit_example_account WHERE id = 1),
		(SELECT balance FROM retrykit_example_account WHERE id = 2)`).Scan(&a, &b); err != nil {
		return err
	}
	fmt.Printf("%d transfers of 10 landed after %d retries; balances %d and %d, total %d (opening total %d)\n",
		workers*transfers, retries.Load(), a, b, a+b, 2*opening)

	// A unique violation is no reason to try again: it comes back at once.
	err = retrysql.Tx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO retrykit_example_account VALUES (1, 0)`)
		return err
	}, p, hooks)
	fmt.Printf("inserting account 1 again: SQLSTATE %s, returned at once: %v\n", retrysql.SQLState(err), err)
	if a+b != 2*opening {
		return fmt.Errorf("money appeared or vanished: total %d, want %d", a+b, 2*opening)
	}
	return nil
}
