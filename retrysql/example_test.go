//go:build go1.25

package retrysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrysql"
)

func ExampleTx() {
	// A database whose first COMMIT fails with 40001, as PostgreSQL's do
	// under SERIALIZABLE when transactions overlap.
	db := sql.OpenDB(&fakeDB{commit: []error{&stateError{"40001"}}})
	defer db.Close()

	attempt := 0
	err := retrysql.Tx(context.Background(), db, &sql.TxOptions{Isolation: sql.LevelSerializable},
		func(ctx context.Context, tx *sql.Tx) error {
			attempt++
			fmt.Println("attempt", attempt) // tx.ExecContext(ctx, ...) here
			return nil
		}, policy.Exponential(time.Millisecond).WithMaxAttempts(5))
	fmt.Println("err:", err)
	// Output:
	// attempt 1
	// attempt 2
	// err: <nil>
}

func ExampleAmbiguousCommitError() {
	// A database whose connection breaks during COMMIT.
	db := sql.OpenDB(&fakeDB{commit: []error{io.ErrUnexpectedEOF}})
	defer db.Close()

	err := retrysql.Tx(context.Background(), db, nil, func(ctx context.Context, tx *sql.Tx) error {
		return nil // tx.ExecContext(ctx, `INSERT INTO payment ...`)
	}, policy.Exponential(time.Millisecond).WithMaxAttempts(5))
	if errors.Is(err, retrysql.ErrAmbiguousCommit) {
		// Not retried: look the payment up before trying again.
		fmt.Println(err)
	}
	// Output:
	// retrysql: commit outcome unknown after 1 attempt: unexpected EOF
}
