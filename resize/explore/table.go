package explore

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Label is a point's outcome as the table shows it: "converged",
// "drift (kubelet)", "drift (resizelet)", "stuck" or "broken".
func Label(o Outcome, owner Owner) string {
	if o == Drifted {
		return fmt.Sprintf("drift (%s)", owner)
	}
	return string(o)
}

// WriteTable writes the report as a table: one row per point (step, call,
// kind, the call made, mode, outcome, what disagreed), the baseline of
// each step, the counts, and the reasons of the kubelet's drifts.
func (r *Report) WriteTable(w io.Writer) {
	if r == nil || w == nil {
		return
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	fmt.Fprintf(w, "Scenario: %s (%s), reconcilePodCgroups %s, flushCheckpoints %s\n", r.Name, r.File,
		onOff(r.ReconcilePodCgroups), onOff(r.FlushCheckpoints))
	if r.Skipped != "" {
		fmt.Fprintf(w, "SKIP: %s\n", r.Skipped)
		return
	}
	for _, b := range r.Baselines {
		line := fmt.Sprintf("  steps[%d] without a fault: %s", b.Step, Label(b.Outcome, b.Owner))
		if why := b.why(); why != "" {
			line += ": " + why
		}
		fmt.Fprintln(w, line)
	}
	if len(r.Points) == 0 {
		fmt.Fprintln(w, "  no I/O calls in the explored steps")
	} else {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  STEP\tCALL\tKIND\tCALL MADE\tMODE\tOUTCOME\tWHAT DISAGREED")
		for _, p := range r.Points {
			what := p.why()
			if p.Same != "" {
				what = strings.TrimSpace("as " + p.Same + "; " + what)
				what = strings.TrimSuffix(what, ";")
			}
			fmt.Fprintf(tw, "  %d %s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Step, p.Action, p.Call, p.Kind, p.Op, p.Mode, Label(p.Outcome, p.Owner), what)
		}
		tw.Flush()
	}
	c := r.Counts()
	fmt.Fprintf(w, "  %s (%s)\n", c, r.Elapsed.Round(time.Millisecond))
	used := map[string]bool{}
	for _, p := range r.Points {
		for _, g := range p.Gaps {
			used[g] = true
		}
	}
	for _, b := range r.Baselines {
		for _, g := range b.Gaps {
			used[g] = true
		}
	}
	for _, g := range Gaps {
		if used[g.ID] {
			fmt.Fprintf(w, "  [%s] %s\n", g.ID, g.Reason)
		}
	}
}

// why is the table's account of a verdict: the kubelet's gaps and the
// first difference of a drift, or what broke or is stuck.
func (v Verdict) why() string {
	switch {
	case v.Outcome == Drifted && len(v.Differences) > 0:
		what := v.Differences[0].String()
		if n := len(v.Differences) - 1; n > 0 {
			what += fmt.Sprintf(" (and %d more)", n)
		}
		if len(v.Gaps) > 0 {
			what = "[" + strings.Join(v.Gaps, ", ") + "] " + what
		}
		return what
	case v.Outcome != Converged || v.Reason != "":
		return firstLine(v.Reason)
	}
	return ""
}

// String summarizes the counts.
func (c Counts) String() string {
	return fmt.Sprintf("%d points: %d converged, %d drift (kubelet), %d drift (resizelet), %d stuck, %d broken",
		c.Points, c.Converged, c.DriftKubelet, c.DriftResizelet, c.Stuck, c.Broken)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
