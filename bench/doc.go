// Package bench compares retrykit with the Go retry libraries users would
// pick instead, on the same scenarios, against a "bare" floor: the operation
// called directly with a context check, and a plain loop for retries.
//
// It is a module of its own so that the library's go.mod lists no peer.
// Run ./run.sh (from this folder) for the benchstat table; BENCHMARKS.md at
// the repository root holds the last one.
package bench
