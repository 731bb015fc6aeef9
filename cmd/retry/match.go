package main

import (
	"bytes"
	"regexp"
)

// maxLine is the longest line -until looks at: a longer line is matched
// on its first maxLine bytes, so that memory stays bounded whatever the
// output.
const maxLine = 64 << 10

// lineMatcher is an io.Writer that looks for a line matching re in what
// is written to it. Lines end with "\n" or "\r\n". It is used by one
// goroutine at a time: exec's copying goroutine, then runCommand once the
// command has ended.
type lineMatcher struct {
	re      *regexp.Regexp
	line    []byte
	matched bool
}

func (m *lineMatcher) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !m.matched {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			m.add(p)
			break
		}
		m.add(p[:i])
		m.endLine()
		p = p[i+1:]
	}
	return n, nil
}

func (m *lineMatcher) add(b []byte) {
	room := maxLine - len(m.line)
	m.line = append(m.line, b[:min(len(b), room)]...)
}

func (m *lineMatcher) endLine() {
	m.matched = m.matched || m.re.Match(bytes.TrimSuffix(m.line, []byte("\r")))
	m.line = m.line[:0]
}

// end matches the last line, one without a newline, and reports whether
// a line matched.
func (m *lineMatcher) end() bool {
	if len(m.line) > 0 {
		m.endLine()
	}
	return m.matched
}
