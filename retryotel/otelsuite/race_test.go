//go:build race

package otelsuite_test

const raceEnabled = true
