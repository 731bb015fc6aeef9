//go:build !race && go1.25

package retry_test

const raceEnabled = false
