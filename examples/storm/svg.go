package main

import (
	"bytes"
	"fmt"
	"html"
	"unicode/utf8"
)

// chart draws the figures as an SVG: for the storm and the overload, one
// goodput strip per client, filled up to the share of calls that succeeded
// each second, the trouble shaded behind them, the recovery time at the end
// of each strip; below them, the table of every other scenario.
func chart(table [][]cell) []byte {
	const (
		left, right = 150, 600 // the strips' x range
		strip, gap  = 22, 8    // a strip's height, and the space between strips
		rowHeight   = 20       // a table row's height
		goalSize    = 11       // the goal column's font size
		margin      = 10       // the space kept free at the right edge
	)
	// The table's columns; the last, the goals, sets the chart's width, so
	// that the longest goal fits.
	cols := []int{10, 150, 300, 450, 590}
	width := 720
	for _, row := range table[2:] {
		end := cols[len(cols)-1] + textWidth(goal[row[0].scenario.Name], goalSize) + margin
		width = max(width, end)
	}
	var b bytes.Buffer
	clients := len(table[0])
	height := 40 + 2*(30+clients*(strip+gap)) + 40 + (len(table)-2)*rowHeight + 20
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="13" font-weight="bold">Retry admission: 800 calls/s into a server of 1,000/s, 4 attempts, 1 s attempt timeout</text>`+"\n")
	y := 40
	for _, row := range table[:2] {
		s := row[0].scenario
		secs := len(row[0].result.Goodput)
		x := func(sec float64) float64 { return left + (right-left)*sec/float64(secs) }
		from, to := s.StallAt, s.StallAt+s.Stall
		if s.Stall == 0 {
			from, to = s.SlowAt, s.SlowAt+s.SlowOf
		}
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+12, html.EscapeString(s.Name))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555555">recovered after</text>`+"\n", width-8, y+12)
		top := y + 20
		bottom := top + clients*(strip+gap) - gap
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e4e4e4"/>`+"\n", x(from.Seconds()), top-4, x(to.Seconds())-x(from.Seconds()), bottom-top+8)
		for i, c := range row {
			y0 := float64(top + i*(strip+gap))
			_, ok := c.result.Recovered(trouble(s), 0.95)
			colour := "#1f77b4"
			if !ok {
				colour = "#d62728"
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y0+strip/2+4, html.EscapeString(c.client.Name))
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#cccccc"/>`+"\n", left, y0, right-left, strip)
			for sec, g := range c.result.Goodput {
				h := g * strip
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x(float64(sec)), y0+strip-h, x(1)-x(0), h, colour)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", width-8, y0+strip/2+4, html.EscapeString(measure(c)))
		}
		y = bottom + 20
	}
	// The other scenarios, as a table.
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">scenario</text>`+"\n", cols[0], y+12)
	for j, c := range table[0] {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", cols[j+1], y+12, html.EscapeString(c.client.Name))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">goal</text>`+"\n", cols[len(cols)-1], y+12)
	for i, row := range table[2:] {
		ty := y + 12 + (i+1)*rowHeight
		name := row[0].scenario.Name
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", cols[0], ty, html.EscapeString(name))
		for j, c := range row {
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", cols[j+1], ty, html.EscapeString(measure(c)))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555555" font-size="11">%s</text>`+"\n", cols[len(cols)-1], ty, html.EscapeString(goal[name]))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// textWidth bounds the width, in pixels, of s set in a sans-serif font of
// the given size: no glyph of the common sans-serif fonts is wider than
// 0.65 em, except capitals such as M and W, which the goals do not use.
func textWidth(s string, size int) int {
	return (utf8.RuneCountInString(s)*size*65 + 99) / 100
}
