//go:build !race && go1.25

package backoff_test

const raceEnabled = false
