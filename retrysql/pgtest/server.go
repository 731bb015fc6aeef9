// Package pgtest starts a throwaway PostgreSQL cluster for the tests of
// retrysql: initdb into a temporary directory, the server on a free
// loopback port with its Unix socket in that directory, everything removed
// by Stop. It needs the PostgreSQL server programs (Debian:
// apt-get install -y postgresql); see [ErrNotInstalled].
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InstallHint is the command that installs the server on Debian and Ubuntu.
const InstallHint = "apt-get install -y postgresql"

// ErrNotInstalled is matched by the error [Start] returns when it finds no
// PostgreSQL server programs: neither initdb and pg_ctl on PATH nor a
// Debian installation under /usr/lib/postgresql/*/bin.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL not found (no initdb and pg_ctl on PATH or in /usr/lib/postgresql/*/bin); install it with: " + InstallHint)

// settings are appended to the cluster's postgresql.conf. Durability is off
// (a test cluster is thrown away), deadlocks are detected after 100 ms
// rather than 1 s, and a backend notices within 100 ms that its client went
// away in the middle of a statement.
var settings = []string{
	"listen_addresses = '127.0.0.1'",
	"max_connections = 60",
	"shared_buffers = 32MB",
	"fsync = off",
	"synchronous_commit = off",
	"full_page_writes = off",
	"deadlock_timeout = '100ms'",
	"client_connection_check_interval = '100ms'",
	"log_min_messages = warning",
}

// Server is a running throwaway cluster. Its methods are safe for
// concurrent use; Stop it once.
type Server struct {
	// Dir holds the data directory, the Unix socket and the server log.
	Dir string
	// Port is the loopback TCP port the server listens on.
	Port int

	bin  string              // the directory of initdb, pg_ctl
	cred *syscall.Credential // the user the server programs run as, when not the caller
}

// Start creates and starts a cluster, waiting until it accepts
// connections. Its superuser is postgres, authenticated by trust. When the
// caller is root, which initdb refuses, the programs run as the system
// user postgres (the Debian package creates it).
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root, which initdb refuses, and no postgres user to run it as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if s.Dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := s.start(ctx, uid, gid); err != nil {
		_ = os.RemoveAll(s.Dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, uid, gid int) error {
	if uid >= 0 {
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(s.Dir, "data")
	if err := s.run(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	conf := append(slices.Clip(settings), fmt.Sprintf("port = %d", port), fmt.Sprintf("unix_socket_directories = '%s'", s.Dir))
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = f.WriteString("\n# pgtest\n" + strings.Join(conf, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	logFile := filepath.Join(s.Dir, "server.log")
	if err := s.run(ctx, "pg_ctl", "-D", data, "-l", logFile, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		return fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return nil
}

// DSN returns the key=value connection string of the server's postgres
// database over loopback TCP, as pgx and lib/pq read it.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", s.Port)
}

// URL returns the connection URL of the server's postgres database over
// loopback TCP.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
}

// Stop stops the server at once (the cluster is thrown away, so nothing
// needs flushing) and removes its directory.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.run(ctx, "pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "stop")
	if rerr := os.RemoveAll(s.Dir); err == nil && rerr != nil {
		err = fmt.Errorf("pgtest: %w", rerr)
	}
	return err
}

// run runs one of the server programs, as the server's user.
func (s *Server) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtest: %s %s: %w\n%s", name, strings.Join(args, " "), err, out.Bytes())
	}
	return nil
}

// findBin returns the directory holding initdb and pg_ctl: PATH first, then
// the newest Debian installation.
func findBin() (string, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(initdb); err == nil {
			initdb = real
		}
		dir := filepath.Dir(initdb)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", ErrNotInstalled
	}
	version := func(dir string) int { // /usr/lib/postgresql/15/bin → 15
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return v
	}
	slices.SortFunc(found, func(a, b string) int { return version(a) - version(b) })
	return found[len(found)-1], nil
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; pg_ctl then fails clearly.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
