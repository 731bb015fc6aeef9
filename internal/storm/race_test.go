//go:build race && go1.25

package storm_test

const raceEnabled = true
