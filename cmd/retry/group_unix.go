//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// setGroup makes the command the leader of a process group of its own, so
// that a signal or a timeout reaches the processes it starts too.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to p's process group, then SIGCONT, so that a
// group the terminal stopped (a read from it) wakes up to the signal.
func signalGroup(p *os.Process, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return
	}
	_ = syscall.Kill(-p.Pid, s) // the group may be gone already
	_ = syscall.Kill(-p.Pid, syscall.SIGCONT)
}

// killGroup sends SIGKILL to p's process group.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
