package main

import (
	"fmt"
	"math"
	"strings"
)

// The chart's size and margins, in SVG units.
const (
	width, height          = 640, 360
	left, right, top, bott = 60, 20, 20, 90
	maxRatio               = 2.0 // the y axis runs from 0 to this ratio
)

// svg draws each line's cost relative to its first (smallest fleet's)
// against the nodes on a log scale, with the 1.2 target dashed.
func svg(lines []line) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, n := range l.nodes {
			lo, hi = min(lo, math.Log10(float64(n))), max(hi, math.Log10(float64(n)))
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	x := func(n int) float64 {
		return left + (math.Log10(float64(n))-lo)/(hi-lo)*(width-left-right)
	}
	y := func(r float64) float64 { return top + (1-min(r, maxRatio)/maxRatio)*(height-top-bott) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	// Axes, the y ticks and the target.
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`+"\n", left, y(0), width-right, y(0))
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`+"\n", left, y(0), left, y(maxRatio))
	for r := 0.0; r <= maxRatio; r += 0.5 {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.1fx</text>`+"\n", left-6, y(r)+4, r)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="gray" stroke-dasharray="6,4"/>`+"\n", left, y(1.2), width-right, y(1.2))
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="gray">target 1.2x</text>`+"\n", width-right, y(1.2)-4)
	ticks := map[int]bool{}
	for _, l := range lines {
		for _, n := range l.nodes {
			if !ticks[n] {
				ticks[n] = true
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x(n), y(0)+16, n)
			}
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle">nodes of 110 pods (log scale); cost per pod relative to the smallest fleet</text>`+"\n", (left+width-right)/2, y(0)+34)
	// The lines, each with its legend entry below the axis.
	for i, l := range lines {
		var pts []string
		for j, n := range l.nodes {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(n), y(l.cost[j]/l.cost[0])))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), l.color)
		for j, n := range l.nodes {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(n), y(l.cost[j]/l.cost[0]), l.color)
		}
		ly := y(0) + 52 + float64(i%2)*16
		lx := float64(left) + float64(i/2)*300
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", lx, ly-4, lx+20, ly-4, l.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+26, ly, l.label)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
