// Command fleetplot draws how a fleet's cost per pod grows with its nodes,
// from the output of resize's fleet benchmarks:
//
//	go test -run '^$' -bench 'Fleet(Build|Advance)/' -benchmem -count 3 ./resize/ > fleet.txt
//	go run ./examples/fleetplot -o resize/fleet-scaling.svg fleet.txt
//
// It reads BenchmarkFleetBuild/nodes=N (ns/pod) and
// BenchmarkFleetAdvance/nodes=N/load=L (ns/pod-minute), takes the median
// of each benchmark's runs, prints a Markdown table of the costs and of
// each one's ratio to the smallest fleet's, and writes an SVG chart of
// those ratios against the nodes (log scale), with the target of
// 1.2 drawn dashed: a flat line is a fleet whose pods cost the same
// however many nodes there are.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// series are the benchmarks drawn, with the metric each reports.
var series = []struct{ name, metric, label, color string }{
	{"BenchmarkFleetBuild", "ns/pod", "build, per pod", "#1f77b4"},
	{"BenchmarkFleetAdvance/load=idle", "ns/pod-minute", "settled minute, per pod", "#2ca02c"},
	{"BenchmarkFleetAdvance/load=vpa", "ns/pod-minute", "minute with a resize per node, per pod", "#d62728"},
}

// benchLine matches a benchmark result line: name with its nodes (and
// load), then the metrics.
var benchLine = regexp.MustCompile(`^(BenchmarkFleet(?:Build|Advance))/nodes=(\d+)(/load=\w+)?(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	out := flag.String("o", "", "write the SVG chart to `FILE` (none without it)")
	flag.Parse()
	costs := map[string]map[int][]float64{} // series name -> nodes -> runs
	read := func(r io.Reader) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			m := benchLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			name, nodes := m[1]+m[3], atoi(m[2])
			f := strings.Fields(m[4])
			for i := 1; i < len(f); i += 2 {
				if f[i] == "ns/pod" || f[i] == "ns/pod-minute" {
					v, _ := strconv.ParseFloat(f[i-1], 64)
					if costs[name] == nil {
						costs[name] = map[int][]float64{}
					}
					costs[name][nodes] = append(costs[name][nodes], v)
				}
			}
		}
	}
	if flag.NArg() == 0 {
		read(os.Stdin)
	}
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetplot:", err)
			os.Exit(2)
		}
		read(f)
		f.Close()
	}
	var lines []line
	fmt.Println("| benchmark | nodes | cost | ratio to the smallest fleet |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, s := range series {
		runs := costs[s.name]
		if len(runs) == 0 {
			continue
		}
		l := line{label: s.label, color: s.color}
		for _, n := range slices.Sorted(maps.Keys(runs)) {
			l.nodes = append(l.nodes, n)
			l.cost = append(l.cost, median(runs[n]))
		}
		for i := range l.nodes {
			fmt.Printf("| %s | %d | %.0f %s | %.2fx |\n", s.name, l.nodes[i], l.cost[i], s.metric, l.cost[i]/l.cost[0])
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		fmt.Fprintln(os.Stderr, "fleetplot: no BenchmarkFleetBuild or BenchmarkFleetAdvance results in the input")
		os.Exit(2)
	}
	if *out != "" {
		if err := os.WriteFile(*out, []byte(svg(lines)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fleetplot:", err)
			os.Exit(2)
		}
	}
}

// line is one series: its costs at each fleet size, smallest first.
type line struct {
	label, color string
	nodes        []int
	cost         []float64
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func median(v []float64) float64 {
	v = slices.Sorted(slices.Values(v))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
