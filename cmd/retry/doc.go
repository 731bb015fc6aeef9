// Command retry runs a command until it succeeds, fails for good, or its
// policy says stop. It brings packages retry and policy to shell scripts, CI
// steps and containers.
//
//	retry [flags] -- command [args...]
//
// The "--" ends retry's flags. Without it, the first word that is not a
// flag starts the command, so "--" may be left out when the command's name
// does not start with "-".
//
// The first attempt runs at once. After a failed one (an exit status other
// than 0), retry waits the policy's delay and runs the command again. Without
// flags it makes at most 5 attempts, with waits of 1s, 2s, 4s and 8s. The
// command's output passes through as it comes, unless -hold holds standard
// output back (see Holding output back). Before each wait, retry
// writes one line to standard error: the attempt, its exit status or
// signal, the wait and the time elapsed since the start of the run.
// At the end of a run that failed, it writes the sentence of a *retry.Error,
// for example "retry: gave up after 5 attempts in 15.1s: exit status 1".
// A failure that -on or -not-on does not retry ends with "retry: not
// retried after 1 attempt in 3ms: exit status 3". A run that succeeded after retries ends with "retry: succeeded after 3
// attempts in 3.2s". Only exit statuses and -until decide: output that says
// "Retry-After: 30" is not read.
//
// # Flags
//
//	-policy TEXT          the whole policy in its text form, as policy.Parse reads it,
//	                      e.g. "exponential 1s cap 30s attempts 5 jitter full"
//	-attempts N           at most N attempts, counting the first; 0 is no limit (default 5)
//	-delay D              the first wait; each further wait doubles, up to -cap (default 1s);
//	                      0 retries at once
//	-cap D                the longest wait (default 1m, or -delay when that is longer);
//	                      0 is no cap
//	-timeout D            end the whole run after D, the running attempt included
//	-attempt-timeout D    end an attempt that runs for D; it counts as a failure
//	-grace D              after a timeout's SIGTERM, wait D before SIGKILL (default 5s)
//	-on CODES             retry only failures with these exit statuses, e.g. 1,75
//	-not-on CODES         retry every failure except those with these exit statuses
//	-until REGEXP         succeed when a line of output matches, whatever the exit status
//	-stdin                read standard input once, to its end, and give it to every attempt
//	-hold                 hold standard output back until the attempt ends: pass on only
//	                      the output of the attempt that succeeds, the others' to standard error
//	-quiet                write none of retry's own lines, except an error before the first attempt
//	-json                 write one JSON line per attempt to standard error instead
//
// -policy gives the whole policy: the shorthands -attempts, -cap and
// -attempt-timeout add to it. A shorthand for a setting the text gives too
// is a conflict, and so is -delay with -policy (the text always names the
// schedule). Durations
// are what time.ParseDuration reads (500ms, 2s, 1m30s).
//
// The default of 5 attempts applies only without -policy. A -policy text
// with no "attempts" and no "elapsed" sets no limit. The command then runs
// until it succeeds, until -timeout ends the run, or until a signal does.
// Add -attempts to such a text to bound it.
//
// retry never starts a wait that would end past -timeout or the policy's
// "elapsed" setting. The run ends then, with the last attempt's status, so
// "-timeout 2m" may end it well before two minutes when the waits are long.
// -timeout also ends the running attempt.
//
// -on and -not-on take exit statuses from 1 to 255, and count an attempt a
// signal ended as 128 plus the signal's number (143 for SIGTERM). An
// attempt that -attempt-timeout ended is retried whatever they say.
//
// -until matches each line of standard output and of standard error, up
// to its first 64 KiB. An attempt succeeds when a line matched, even if the
// command then exits with another status. An attempt that exits 0 without
// a matching line is retried. The command is left to end on its own after
// a match. When retry's standard output and standard error are one file (a
// terminal, or after 2>&1), the command writes both to one pipe of retry's,
// so that their lines keep their order.
//
// Without -stdin every attempt reads retry's standard input as it is: what
// one attempt reads, the next does not see. With -stdin, retry reads it to
// its end into memory before the first attempt, and each attempt reads all
// of it afresh.
//
// -json writes, for each attempt, an object with attempt, status, signal (its
// number, when one ended the attempt), timed_out, matched (with -until),
// error, duration and elapsed (in seconds), and wait (in seconds) before a
// retry. The last line has exit, retry's own exit status, instead of wait,
// and summary, the final sentence, when the run failed. A signal that ends
// a wait adds such a last line for the attempt before the wait, which then
// has two lines. An error before the first attempt, such as a command not
// found, is a line of text, as with -quiet. The command's own standard
// error is mixed in, and with -hold the standard output of the attempts
// that failed: their lines are those that are not JSON.
//
// # Holding output back
//
// -hold holds the command's standard output back until the attempt ends.
// The attempt that succeeds passes its output on to standard output, once,
// byte for byte. Every other attempt's goes to standard error, before
// retry's line about it, with a newline added when it does not end with
// one. So in "retry -hold -- curl -fsS URL | jq .", jq reads the output of
// one attempt, or nothing when the run fails. Standard error passes
// through as it comes. When standard output and standard error are one
// file (a terminal, or after 2>&1), -hold holds both, in the order the
// command wrote them, and passes them on together: downstream cannot tell
// them apart anyway. -until matches the held lines as it matches others.
//
// The held output goes to a temporary file in $TMPDIR (os.TempDir), not to
// memory, so retry's memory stays small whatever the command prints. The
// file holds one attempt's output at a time. On Unix it is removed as soon
// as it is made, and its space is freed when retry ends, however it ends. On a tmpfs it takes the system's memory
// all the same. retry exits 2 before anything runs when it cannot make
// the file. An attempt whose output it cannot keep (the disk is full)
// fails, and is retried. An attempt that succeeded but whose output it
// cannot pass on fails too, and is not retried: part of the output may
// have gone.
//
// Holding back is off by default, even when standard output is not a
// terminal. A CI log is not a terminal either: holding would hide a long
// command's progress there until it ends, and the output of a step that a
// CI timeout kills would never show. A command that behaves one way by
// hand and another in a script is also hard to debug. Only the caller
// knows that the next stage parses the output: -hold says so.
//
// # Exit status
//
//   - 0 when an attempt succeeded.
//   - The last attempt's exit status when the run failed: when the attempts
//     ran out, when -timeout ended it, or when the status is one -on or
//     -not-on does not retry. A signal counts as 128 plus its number (137
//     for SIGKILL).
//   - 1 when the last attempt exited 0 without the line -until asks for,
//     exited 0 after a timeout had ended it, or exited 0 but lost the
//     standard output -hold held.
//   - 2 for bad flags, before anything runs: an unknown flag or policy word,
//     a negative duration, conflicting flags, no command, a standard input
//     that -stdin cannot read, or a temporary file that -hold cannot make.
//   - 127 when the command cannot be found, and 126 when it cannot be run
//     (not executable, a directory, not a program the system can start), as
//     shells have it. Such a failure is not retried. retry looks the command
//     up before the first attempt, and makes none when that fails.
//   - 128 plus the signal's number (130 for SIGINT, 131 for SIGQUIT, 143
//     for SIGTERM) when a signal ends the run during a wait, as a shell loop
//     that was interrupted in its sleep would exit.
//
// # Signals and timeouts
//
// The command runs in a process group of its own, so that signals and
// timeouts reach the processes it starts too. SIGINT, SIGTERM, SIGHUP and
// SIGQUIT are passed on to that group. The run then ends when the command
// does, with the command's own exit status, and no further attempt starts.
// A wait ends at once. The timeouts still hold: a command that outlives
// the signal is ended as a timeout ends it, at -timeout or
// -attempt-timeout, whichever comes first. A signal that was ignored when retry started (as
// nohup does to SIGHUP) stays ignored. Since the group is not the terminal's foreground group, a command
// that reads from the terminal is stopped by it: give it its input with
// -stdin.
//
// A timeout (-attempt-timeout or -timeout) sends SIGTERM to the group, and
// SIGKILL once -grace has passed if the command is still running. The
// attempt is a failure, even if the command exits 0 as it stops, unless a
// line of its output matched -until. What is
// left of the group after the command has ended is not killed: a command
// may start a daemon. With -until, -hold or -stdin the command's output or input
// goes through pipes of retry's, and retry closes them at most -grace
// after the command has ended, even if a process it started still holds
// them. Where there are no process groups (Windows), signals and timeouts
// reach the command alone, and a signal that cannot be passed on kills it.
//
// # Recipes
//
//	# wait for a port: up to two minutes, trying every 500ms to 5s
//	retry -attempts 0 -timeout 2m -delay 500ms -cap 5s -- nc -z db 5432
//
//	# a flaky download: 5 attempts of at most 2 minutes each
//	retry -attempt-timeout 2m -- curl -fsSLo tool.tgz https://example.com/tool.tgz
//
//	# poll until healthy: every 2s, up to 30 times, until the status says ok
//	retry -policy "constant 2s attempts 30" -until '"status": *"ok"' -- curl -s http://localhost:8080/healthz
//
//	# a call whose output the next stage parses: jq reads one attempt's output
//	retry -hold -- curl -fsS https://example.com/api/status | jq .status
package main
