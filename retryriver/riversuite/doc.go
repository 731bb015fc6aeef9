// Package riversuite holds the tests of retryriver that run River against
// PostgreSQL, through pgx and riverpgxv5, on a throwaway cluster of
// retrysql/pgtest. It is a module of its own, never released, so that
// retryriver's go.mod requires only what its library code imports.
package riversuite
