package pgtest_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// commitCutter is a loopback TCP proxy in front of the server that breaks
// the first connection to send COMMIT, in one of two ways: with reach, it
// passes the COMMIT on and cuts both sides as soon as the server answers,
// so that the transaction committed and the client never hears so;
// without, it cuts them before passing it on, so that the transaction did
// not commit. Either way the client sees its connection break during
// COMMIT and cannot tell which happened. Later connections pass through.
//
// It reads the client's side of the wire protocol message by message (a
// startup message, then a type byte and a length before each message), so
// it needs sslmode=disable.
type commitCutter struct {
	target string
	reach  bool
	ln     net.Listener
	cut    atomic.Bool // the COMMIT has been cut
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

// newCommitCutter starts a proxy to target that the test closes.
func newCommitCutter(t *testing.T, target string, reach bool) *commitCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &commitCutter{target: target, reach: reach, ln: ln}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// DSN returns a connection string to the server through the proxy.
func (p *commitCutter) DSN() string {
	addr := p.ln.Addr().(*net.TCPAddr)
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", addr.Port)
}

func (p *commitCutter) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Go(func() { p.serve(client, server) })
	}
}

// serve carries one connection.
func (p *commitCutter) serve(client, server net.Conn) {
	var armed atomic.Bool // the COMMIT went to the server: cut on its answer
	closeBoth := sync.OnceFunc(func() {
		_ = client.Close()
		_ = server.Close()
	})
	defer closeBoth()
	p.wg.Go(func() {
		defer closeBoth()
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				// The client waits for each answer before its next
				// request, so bytes read after the COMMIT went out are
				// the COMMIT's answer.
				if armed.Load() {
					return
				}
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})

	startup, err := readStartup(client)
	if err != nil {
		return
	}
	if _, err := server.Write(startup); err != nil {
		return
	}
	for {
		msg, err := readMessage(client)
		if err != nil {
			return
		}
		if isCommit(msg) && p.cut.CompareAndSwap(false, true) {
			if !p.reach {
				return // never sent: the server rolls back when the connection closes
			}
			armed.Store(true)
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// readStartup reads the untyped first message of a connection.
func readStartup(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 8 || n > 1<<20 {
		return nil, fmt.Errorf("proxy: startup message of %d bytes", n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	if v := binary.BigEndian.Uint32(msg[4:8]); v>>16 != 3 {
		return nil, errors.New("proxy: not a protocol 3 startup message (an SSL or GSS request? use sslmode=disable)")
	}
	return msg, nil
}

// readMessage reads one typed message: its type byte, length and body.
func readMessage(r io.Reader) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("proxy: message %q of %d bytes", hdr[0], n)
	}
	msg := make([]byte, 1+n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[5:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// isCommit reports whether msg runs COMMIT: a simple Query, or the Parse
// of the extended protocol.
func isCommit(msg []byte) bool {
	body := msg[5:]
	switch msg[0] {
	case 'Q':
	case 'P':
		i := bytes.IndexByte(body, 0) // the statement's name
		if i < 0 {
			return false
		}
		body = body[i+1:]
	default:
		return false
	}
	if i := bytes.IndexByte(body, 0); i >= 0 {
		body = body[:i]
	}
	q := strings.TrimSuffix(strings.TrimSpace(string(body)), ";")
	return strings.EqualFold(q, "commit") || strings.EqualFold(q, "end")
}
