//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is the test command retry runs: this test binary, with childEnv
// set. Its arguments are a mode and a file, to which every run appends a
// line as it starts (once it is ready for what its mode tests), so that a
// test knows how many attempts ran. The modes:
//
//   - count FILE OUTCOME...: ends as the OUTCOME for this run, the last one
//     repeated. An OUTCOME is an exit status, alone or followed by ":" and a
//     line to write to standard output, by "!" and one for standard error,
//     by "=" and text to write to standard output as it is, with no newline
//     added, or by "*" and a number N of bytes to write there with
//     writeBulk(os.Stdout, N, run), run counting the runs from 1.
//   - stdin FILE OUTCOME...: reads standard input to its end into FILE.N
//     (N counting the runs from 1), then ends as count does.
//   - hang FILE [ignore-term|ignore-signals|exit-0-on-term]: writes
//     "started" and sleeps forever, with SIGTERM ignored, with every signal
//     retry passes on ignored, or with SIGTERM ending it with status 0, when
//     asked.
//   - trap FILE STATUS: writes "ready" once it catches SIGINT, SIGTERM, SIGHUP and SIGQUIT,
//     and when one comes, writes its name to FILE.sig and exits with STATUS.
//   - family FILE: starts "trap FILE.grand 0" as a process of its own and
//     waits for it.
//   - orphan FILE: starts "hang FILE.grand" with its standard error on its
//     own standard output, writes the process id to FILE.pid, writes
//     "ready" once the other has started, and exits 0, leaving it behind.
//   - vanish FILE PATH: removes PATH, the command retry was given, and
//     exits 1.
//   - interleave FILE N: writes "out I" to standard output and "err I" to
//     standard error for I from 1 to N, in turn, and exits 0.
func child(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "child: want a mode and a file")
		return 100
	}
	mode, file, rest := args[0], args[1], args[2:]
	switch mode {
	case "count":
		return end(rest, ran(file))
	case "stdin":
		n := ran(file)
		in, err := io.ReadAll(os.Stdin)
		check(err)
		check(os.WriteFile(file+"."+strconv.Itoa(n), in, 0o644))
		return end(rest, n)
	case "hang":
		if len(rest) > 0 && rest[0] == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		if len(rest) > 0 && rest[0] == "ignore-signals" {
			signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		}
		if len(rest) > 0 && rest[0] == "exit-0-on-term" {
			term := make(chan os.Signal, 1)
			signal.Notify(term, syscall.SIGTERM)
			go func() {
				<-term
				os.Exit(0)
			}()
		}
		ran(file)
		fmt.Println("started")
		for {
			time.Sleep(time.Hour)
		}
	case "trap":
		return trap(file, rest)
	case "family":
		ran(file)
		cmd := exec.Command(os.Args[0], "trap", file+".grand", "0")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		check(cmd.Run())
		return 0
	case "orphan":
		ran(file)
		cmd := exec.Command(os.Args[0], "hang", file+".grand")
		cmd.Stderr = os.Stdout
		out, err := cmd.StdoutPipe()
		check(err)
		check(cmd.Start())
		check(os.WriteFile(file+".pid", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644))
		_, err = bufio.NewReader(out).ReadString('\n')
		check(err)
		fmt.Println("ready")
		return 0
	case "interleave":
		ran(file)
		n, err := strconv.Atoi(rest[0])
		check(err)
		for i := 1; i <= n; i++ {
			fmt.Fprintln(os.Stdout, "out", i)
			fmt.Fprintln(os.Stderr, "err", i)
		}
		return 0
	case "vanish":
		ran(file)
		check(os.Remove(rest[0]))
		return 1
	}
	fmt.Fprintf(os.Stderr, "child: unknown mode %q\n", mode)
	return 100
}

// ran appends a line to file and returns how many it has.
func ran(file string) int {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	check(err)
	_, err = f.WriteString("ran\n")
	check(err)
	check(f.Close())
	b, err := os.ReadFile(file)
	check(err)
	return strings.Count(string(b), "\n")
}

// end ends run n as outcomes say.
func end(outcomes []string, n int) int {
	o := outcomes[min(n, len(outcomes))-1]
	code := o
	if i := strings.IndexAny(o, ":!=*"); i >= 0 {
		code = o[:i]
		text := o[i+1:]
		switch o[i] {
		case ':':
			fmt.Fprintln(os.Stdout, text)
		case '!':
			fmt.Fprintln(os.Stderr, text)
		case '=':
			fmt.Fprint(os.Stdout, text)
		case '*':
			size, err := strconv.Atoi(text)
			check(err)
			check(writeBulk(os.Stdout, size, n))
		}
	}
	status, err := strconv.Atoi(code)
	check(err)
	return status
}

// bulkBlock is the size of the blocks bulk is made of.
const bulkBlock = 4 << 10

// bulkBlocks are the blocks bulk is made of: byte k of block i is 7k+i.
var bulkBlocks = sync.OnceValue(func() (blocks [256][]byte) {
	for i := range blocks {
		blocks[i] = make([]byte, bulkBlock)
		for k := range blocks[i] {
			blocks[i][k] = byte(7*k + i)
		}
	}
	return blocks
})

// writeBulk writes bulk(size, run) to w, a block at a time, so that the
// test command's memory stays small whatever the size.
func writeBulk(w io.Writer, size, run int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for j := 0; size > 0; j++ {
		b := bulkBlocks()[(j+run)%256][:min(size, bulkBlock)]
		if _, err := bw.Write(b); err != nil {
			return err
		}
		size -= len(b)
	}
	return bw.Flush()
}

// isBulk reports whether b is bulk(len(b), run): what writeBulk writes.
func isBulk(b []byte, run int) bool {
	for j := 0; len(b) > 0; j++ {
		n := min(len(b), bulkBlock)
		if !bytes.Equal(b[:n], bulkBlocks()[(j+run)%256][:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

func trap(file string, rest []string) int {
	status, err := strconv.Atoi(rest[0])
	check(err)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	ran(file)
	fmt.Println("ready")
	sig := <-sigs
	check(os.WriteFile(file+".sig", []byte(sig.String()), 0o644))
	return status
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(101)
	}
}
