//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// setGroup does nothing: without process groups, signals and timeouts
// reach the command alone.
func setGroup(*exec.Cmd) {}

// signalGroup sends sig to p, or kills p where sig cannot be sent (os.Interrupt on Windows).
func signalGroup(p *os.Process, sig os.Signal) {
	if p.Signal(sig) != nil {
		_ = p.Kill()
	}
}

// killGroup kills p.
func killGroup(p *os.Process) { _ = p.Kill() }
