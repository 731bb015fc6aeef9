//go:build race

package main

// raceEnabled says the tests run with the race detector, so TestMain
// builds the retry command with it too.
const raceEnabled = true
