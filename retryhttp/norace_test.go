//go:build !race && go1.25

package retryhttp_test

const raceEnabled = false
