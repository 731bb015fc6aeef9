package main

import (
	"bytes"
	"fmt"
	"html"

	"github.com/retrykit/retrykit/internal/storm"
)

// chart draws the storm's goodput per second as small multiples: one strip
// per client, filled up to the share of calls that succeeded, the stall
// shaded behind them, each client's recovery time at the end of its strip.
func chart(all []results, s storm.Scenario) []byte {
	const (
		width       = 640
		left, right = 150, 560 // the strips' x range
		top         = 44       // the first strip's top
		strip, gap  = 26, 10   // a strip's height, and the space between strips
	)
	secs := len(all[0].stormed.Goodput)
	bottom := top + len(all)*(strip+gap) - gap
	height := bottom + 30
	x := func(sec float64) float64 { return left + (right-left)*sec/float64(secs) }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="13" font-weight="bold">Goodput per second: %d calls/s; the server (1,000/s) stalls %v at t = %v</text>`+"\n", s.Rate, s.Stall, s.StallAt)
	fmt.Fprintf(&b, `<text x="%d" y="36" text-anchor="end" fill="#555555">recovered after</text>`+"\n", width-8)
	sa, se := s.StallAt.Seconds(), (s.StallAt + s.Stall).Seconds()
	fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e4e4e4"/>`+"\n", x(sa), top-6, x(se)-x(sa), bottom-top+12)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">stall</text>`+"\n", (x(sa)+x(se))/2, top-10)
	for i, r := range all {
		y0 := float64(top + i*(strip+gap))
		y1 := y0 + strip
		colour := "#d62728"
		if r.recoveredOK {
			colour = "#1f77b4"
		}
		// The strip's outline at 100 %, then the goodput as a filled step area.
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#bbbbbb" stroke-width="0.5"/>`+"\n", left, y0, right-left, strip)
		var pts bytes.Buffer
		fmt.Fprintf(&pts, "%.1f,%.1f", x(0), y1)
		for sec, g := range r.stormed.Goodput {
			y := y1 - g*strip
			fmt.Fprintf(&pts, " %.1f,%.1f %.1f,%.1f", x(float64(sec)), y, x(float64(sec+1)), y)
		}
		fmt.Fprintf(&pts, " %.1f,%.1f", x(float64(secs)), y1)
		fmt.Fprintf(&b, `<polygon fill="%s" fill-opacity="0.75" points="%s"/>`+"\n", colour, pts.Bytes())
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y0+strip/2+4, html.EscapeString(r.client.Name))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" font-weight="bold" fill="%s">%s</text>`+"\n", width-8, y0+strip/2+4, colour, recovery(r))
	}
	for sec := 0; sec <= secs; sec += 5 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%ds</text>`+"\n", x(float64(sec)), bottom+18, sec)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
