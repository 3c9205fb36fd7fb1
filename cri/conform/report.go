package conform

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Status is the outcome of one check.
type Status string

const (
	// Pass means the runtime behaves as the kubelet expects.
	Pass Status = "PASS"
	// Fail means the runtime behaves in a way the kubelet mishandles, or a
	// call failed that must not.
	Fail Status = "FAIL"
	// NotSupported means the runtime lacks the feature. It is acceptable
	// only for a check that is not Required, where the kubelet has a
	// fallback.
	NotSupported Status = "NOT SUPPORTED"
	// NotRun means the check could not run: the run was interrupted or an
	// earlier step it needs failed (the reason is in the check's summary).
	NotRun Status = "NOT RUN"
)

// CheckResult is one check of the report: what was done, what was read
// back and what a kubelet would make of it.
type CheckResult struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Status   Status `json:"status"`
	// Summary says in one line what was found.
	Summary string `json:"summary"`
	// Evidence lists the values sent and the values read back (cgroup
	// files, ContainerStatus, errors, durations), one finding a line.
	Evidence []string `json:"evidence"`
	// Kubelet says what a 1.35 kubelet does with this behaviour.
	Kubelet string `json:"kubelet"`
}

// ok reports whether the check lets the run pass: a required check must
// pass; an optional one may be NotSupported but must not fail.
func (c *CheckResult) ok() bool {
	if c.Required {
		return c.Status == Pass
	}
	return c.Status != Fail
}

// CallTiming is one CRI call the run made and how long it took.
type CallTiming struct {
	Method   string        `json:"method"`
	Step     string        `json:"step"` // what the call was for, e.g. "1: cpu increase"
	Duration time.Duration `json:"duration"`
	Err      string        `json:"error,omitempty"`
}

// Report is the outcome of a run: the runtime, the host, every check and
// every call, and what the cleanup removed.
type Report struct {
	// Runtime is the runtime's name and version as its Version call gives
	// them ("containerd 1.6.20"), or the Go type of an in-process runtime.
	Runtime string `json:"runtime"`
	// APIVersion is the CRI version the runtime reports ("v1").
	APIVersion string `json:"apiVersion,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
	// RuntimeHandler is the handler the sandbox was run with (empty: the
	// runtime's default).
	RuntimeHandler string           `json:"runtimeHandler,omitempty"`
	CgroupVersion  cgconfig.Version `json:"cgroupVersion"`
	// CgroupDriver is the runtime's cgroup driver the run named its pod
	// cgroup for (Options.CgroupDriver): cgroupfs or systemd.
	CgroupDriver cgconfig.Driver `json:"cgroupDriver"`
	// CgroupRoot is where the container cgroups were read (a cgroup
	// filesystem, or the in-memory kernel).
	CgroupRoot string `json:"cgroupRoot"`
	// Prefix names every sandbox, container label and cgroup the run made.
	Prefix string `json:"prefix"`
	// CgroupSource says how the container's cgroup was found.
	CgroupSource string `json:"cgroupSource,omitempty"`
	// OCIRuntime names the OCI runtime below the CRI runtime (runc, crun)
	// and where that was read, when the runtime says (containerd does in
	// its verbose ContainerStatus).
	OCIRuntime string `json:"ociRuntime,omitempty"`
	// WeightFormula is how the runtime turns cpu shares into cgroup files:
	// on v1 cpu.shares is written as sent; on v2 the cpu.weight formula
	// that matched every value read back.
	WeightFormula string        `json:"weightFormula,omitempty"`
	Checks        []CheckResult `json:"checks"`
	Calls         []CallTiming  `json:"calls"`
	// Swept lists what earlier runs that died without cleaning up had
	// left, removed before this run started.
	Swept []string `json:"swept,omitempty"`
	// Removed and Left are what the cleanup removed and what it could not.
	Removed []string `json:"removed"`
	Left    []string `json:"left,omitempty"`
	// SetupError is set when the run's sandbox or container could not be
	// started: no check ran.
	SetupError string `json:"setupError,omitempty"`
	// Interrupted is set when the run's context ended before the checks
	// did (a signal in resizesim).
	Interrupted bool          `json:"interrupted,omitempty"`
	Duration    time.Duration `json:"duration"`
}

// Passed reports whether every required check passed, no check failed,
// nothing was left behind and the run was not interrupted.
func (r *Report) Passed() bool {
	if r == nil {
		return false // no report, nothing passed
	}
	if r.Interrupted || r.SetupError != "" || len(r.Left) > 0 {
		return false
	}
	for i := range r.Checks {
		if !r.Checks[i].ok() {
			return false
		}
	}
	return true
}

// Check returns the check with the given ID, or nil.
func (r *Report) Check(id int) *CheckResult {
	if r == nil {
		return nil
	}
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// WriteText writes the report for people: a header, then per check its
// status, summary, evidence and the kubelet's reading, then the totals.
func (r *Report) WriteText(w io.Writer) {
	if r == nil || w == nil {
		return
	}
	fmt.Fprintf(w, "CRI resize conformance of %s", r.Runtime)
	if r.APIVersion != "" {
		fmt.Fprintf(w, " (CRI %s)", r.APIVersion)
	}
	if r.RuntimeHandler != "" {
		fmt.Fprintf(w, ", runtime handler %s", r.RuntimeHandler)
	}
	if r.Endpoint != "" {
		fmt.Fprintf(w, " at %s", r.Endpoint)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "cgroup %s (%s driver) at %s; objects named %s\n", r.CgroupVersion, r.CgroupDriver, r.CgroupRoot, r.Prefix)
	if r.OCIRuntime != "" {
		fmt.Fprintf(w, "OCI runtime: %s\n", r.OCIRuntime)
	}
	if r.CgroupSource != "" {
		fmt.Fprintf(w, "container cgroup: %s\n", r.CgroupSource)
	}
	if r.WeightFormula != "" {
		fmt.Fprintf(w, "cpu shares: %s\n", r.WeightFormula)
	}
	if r.SetupError != "" {
		fmt.Fprintf(w, "SETUP FAILED: %s\n", r.SetupError)
	}
	for _, s := range r.Swept {
		fmt.Fprintf(w, "swept from an earlier run: %s\n", s)
	}
	checks := slices.Clone(r.Checks)
	slices.SortFunc(checks, func(a, b CheckResult) int { return a.ID - b.ID })
	for _, c := range checks {
		req := "required"
		if !c.Required {
			req = "optional"
		}
		fmt.Fprintf(w, "\n%d. %s (%s): %s\n", c.ID, c.Name, req, c.Status)
		if c.Summary != "" {
			fmt.Fprintf(w, "   %s\n", c.Summary)
		}
		for _, e := range c.Evidence {
			// Runtimes end some messages with a newline (containerd's
			// ": unknown"): one finding stays on one line.
			fmt.Fprintf(w, "   - %s\n", strings.Join(strings.Fields(e), " "))
		}
		if c.Kubelet != "" && c.Status != NotRun {
			fmt.Fprintf(w, "   kubelet: %s\n", c.Kubelet)
		}
	}
	counts := map[Status]int{}
	for _, c := range r.Checks {
		counts[c.Status]++
	}
	fmt.Fprintf(w, "\n%d calls in %s; cleanup removed %d objects", len(r.Calls), r.Duration.Round(time.Millisecond), len(r.Removed))
	if len(r.Left) > 0 {
		fmt.Fprintf(w, " and LEFT %d: %s", len(r.Left), strings.Join(r.Left, ", "))
	}
	fmt.Fprintln(w)
	verdict := "PASS"
	switch {
	case r.Interrupted:
		verdict = "INTERRUPTED"
	case !r.Passed():
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d not supported, %d not run\n",
		verdict, counts[Pass], counts[Fail], counts[NotSupported], counts[NotRun])
}
