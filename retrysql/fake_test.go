//go:build go1.25

package retrysql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// stateError is a driver error with a SQLSTATE, as pgx's and lib/pq's are.
type stateError struct{ code string }

func (e *stateError) Error() string    { return "ERROR: scripted (SQLSTATE " + e.code + ")" }
func (e *stateError) SQLState() string { return e.code }

// unsentError is an error the driver marks as raised before anything was
// sent, as pgx's SafeToRetry errors are.
type unsentError struct{}

func (unsentError) Error() string     { return "scripted: nothing sent" }
func (unsentError) SafeToRetry() bool { return true }

// fakeDB is a database/sql connector whose BEGIN and COMMIT answer from
// scripts (one entry per call, then success) and that counts what it is
// asked to do.
type fakeDB struct {
	mu                        sync.Mutex
	begin, commit             []error
	begins, commits, rollback int
	onCommit                  func() error // if set, answers every COMMIT instead of the script
}

func (f *fakeDB) next(script *[]error) error {
	if len(*script) == 0 {
		return nil
	}
	err := (*script)[0]
	*script = (*script)[1:]
	return err
}

func (f *fakeDB) counts() (begins, commits, rollbacks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.begins, f.commits, f.rollback
}

func (f *fakeDB) Connect(context.Context) (driver.Conn, error) { return &fakeConn{db: f}, nil }
func (f *fakeDB) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return nil, errors.New("fake: use sql.OpenDB") }

type fakeConn struct{ db *fakeDB }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fake: no statements")
}
func (c *fakeConn) Close() error { return nil }
func (c *fakeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *fakeConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	c.db.begins++
	if err := c.db.next(&c.db.begin); err != nil {
		return nil, err
	}
	return &fakeTx{db: c.db}, nil
}

type fakeTx struct{ db *fakeDB }

func (t *fakeTx) Commit() error {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	t.db.commits++
	if t.db.onCommit != nil {
		return t.db.onCommit()
	}
	return t.db.next(&t.db.commit)
}

func (t *fakeTx) Rollback() error {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	t.db.rollback++
	return nil
}

// open returns a pool on f that the test closes, after checking that no
// connection is still in use. (database/sql rolls back a transaction whose
// context ended on a goroutine of its own: tests of that run inside
// testing/synctest and call synctest.Wait first.)
func open(t *testing.T, f *fakeDB) *sql.DB {
	t.Helper()
	db := sql.OpenDB(f)
	t.Cleanup(func() {
		require.Zero(t, db.Stats().InUse, "connections still in use after the test")
		require.NoError(t, db.Close())
	})
	return db
}
