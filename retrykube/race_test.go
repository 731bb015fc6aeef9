//go:build race

package retrykube_test

// raceEnabled: the race detector is on, and heap sizes in bytes mean nothing.
const raceEnabled = true
