package main

import (
	"io"
	"os"
)

// hold is where -hold keeps an attempt's standard output until the attempt
// has ended: a temporary file, so that retry's memory stays small whatever
// the command prints. It holds one attempt's output at a time. It is used
// by one goroutine at a time: exec's copying goroutine, then the attempt
// once the command has ended.
type hold struct {
	f       *os.File
	removed bool  // the file's name is gone already: the open file lives on
	err     error // the first error keeping the running attempt's output
}

// newHold makes the temporary file. Where the system allows it, the file
// is removed at once, and lives on unnamed until retry ends; elsewhere
// close removes it.
func newHold() (*hold, error) {
	f, err := os.CreateTemp("", "retry-hold-")
	if err != nil {
		return nil, err
	}
	return &hold{f: f, removed: os.Remove(f.Name()) == nil}, nil
}

// Write adds p to the held output. It never fails: after an error, which
// it keeps for the attempt, it drops what comes. The command so ends as it
// would, rather than of a broken pipe.
func (h *hold) Write(p []byte) (int, error) {
	if h.err == nil {
		_, h.err = h.f.Write(p)
	}
	return len(p), nil
}

// reset empties the held output for a new attempt.
func (h *hold) reset() {
	h.err = h.f.Truncate(0)
	if h.err == nil {
		_, h.err = h.f.Seek(0, io.SeekStart)
	}
}

// passOn writes the held output to w. With endLine, it adds a newline to
// output that does not end with one, so that what w gets next starts a
// line of its own.
func (h *hold) passOn(w io.Writer, endLine bool) error {
	size, err := h.f.Seek(0, io.SeekCurrent)
	if err != nil || size == 0 {
		return err
	}
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(w, h.f); err != nil {
		return err
	}
	var last [1]byte
	if _, err := h.f.ReadAt(last[:], size-1); err != nil || !endLine || last[0] == '\n' {
		return err
	}
	_, err = w.Write([]byte("\n"))
	return err
}

// close closes the file, and removes it if newHold could not.
func (h *hold) close() {
	_ = h.f.Close()
	if !h.removed {
		_ = os.Remove(h.f.Name())
	}
}
