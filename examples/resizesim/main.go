// Command resizesim runs resize scenarios against the resizelet engine and
// prints what the kubelet did, step by step.
//
//	resizesim                      # the built-in walkthrough (the "In-Place Pod Resize GA" story)
//	resizesim run FILE...          # run scenario files
//	resizesim plan FILE...         # for each resize step, what the node would do (a dry run), then do it
//	resizesim explore FILE...      # crash the kubelet around, or fail, every I/O call of every step, and judge the end
//	resizesim conform --cri-endpoint unix:///PATH --image IMAGE  # check a CRI runtime's in-place resize (conform.go)
//	resizesim agent --kubeconfig FILE --nodes N  # N resizelet nodes on a real API server, until SIGTERM (agent.go)
//
// Flags (before or after the command):
//
//	--cgroup-root DIR              # real cgroup filesystem mounted at DIR
//	--cri-endpoint unix:///PATH    # real CRI runtime at that socket
//	--image NAME                   # the image containers run on a real runtime
//	--runtime-handler NAME         # the runtime handler the sandboxes run with (containerd: runtimes.NAME, e.g. crun)
//	--cgroup-driver systemd        # the real runtime's cgroup driver (default cgroupfs): only files whose node uses it run
//	--reconcile-pod-cgroups        # explore: run the kubelets with NodeConfig.ReconcilePodCgroups
//	--flush-checkpoints            # explore: run the kubelets with NodeConfig.FlushCheckpoints
//	--share-crash-states           # explore: run crash points that leave the same state once
//	--steps resize                 # explore: only the resize steps (default: every step that runs the node)
//	-o json, --output json         # run: one JSON document for the whole run instead of the transcripts
//	--junit FILE                   # run: also write a JUnit XML report to FILE
//	--metrics                      # run: print the kubelet's resize metrics (Prometheus text format) after each transcript
//	--golden                       # run: compare each transcript with FILE.golden beside the file (a difference fails it)
//	--write-golden                 # run: write each transcript to FILE.golden beside the file
//
// A scenario file chooses the kubelet version with its top-level kubelet
// key; the versions resizesim reproduces are listed in the usage message
// (package profile's Versions), 1.35 when the key is absent.
//
// The exit status is 0 when every expectation held, 1 when any failed (each
// mismatch is printed as a diff with its file, line, step, key path,
// wanted and found values; an action step that failed with no expect.error
// after it is one too) and 2 when a file is not a valid scenario or the run could not be
// done. For explore it is 0 when no point is broken or stuck and every
// drift is one the kubelet v1.35.4 shows itself (labelled with its cause),
// 1 otherwise, and 2 when a file could not be explored. The scenario
// format, the transcript and these exit statuses are specified in
// resize/scenario/FORMAT.md and implemented by package resize/scenario;
// package resize/explore is the explorer.
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/resize/explore"
	"github.com/resizelet/resizelet/resize/profile"
	"github.com/resizelet/resizelet/resize/scenario"
)

// walkthrough is a copy of testdata/scenarios/walkthrough.yaml (a test
// keeps the two identical), embedded so that the command runs anywhere.
//
//go:embed walkthrough.yaml
var walkthrough []byte

// Exit statuses.
const (
	exitOK       = 0
	exitMismatch = 1
	exitInvalid  = 2
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command without the process around it, for tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if rest, ok := conformArgs(args); ok {
		return runConform(ctx, rest, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "agent" {
		return runAgent(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("resizesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts scenario.Options
	fs.StringVar(&opts.CgroupRoot, "cgroup-root", "", "run pod and container cgroups in the real cgroup filesystem mounted at `DIR`")
	fs.StringVar(&opts.CRIEndpoint, "cri-endpoint", "", "run containers in the CRI runtime at `unix:///PATH`")
	fs.StringVar(&opts.Image, "image", "", "the `image` containers run on a real runtime")
	fs.StringVar(&opts.RuntimeHandler, "runtime-handler", "", "run the sandboxes with the runtime `handler` of the runtime at --cri-endpoint (a RuntimeClass's handler, such as containerd's runtimes.crun); empty is its default")
	var driver string
	fs.StringVar(&driver, "cgroup-driver", "", "the cgroup `driver` of the runtime at --cri-endpoint, cgroupfs (the default) or systemd (containerd's SystemdCgroup): only scenario files whose node uses it run there")
	var xopts explore.Options
	var steps string
	fs.BoolVar(&xopts.ReconcilePodCgroups, "reconcile-pod-cgroups", false, "explore: run the kubelets with ReconcilePodCgroups (resizelet's opt-in fix)")
	fs.BoolVar(&xopts.FlushCheckpoints, "flush-checkpoints", false, "explore: run the kubelets with FlushCheckpoints (resizelet's opt-in fix)")
	fs.BoolVar(&xopts.ShareCrashStates, "share-crash-states", false, "explore: run crash points that leave the same state once, and share the outcome")
	fs.StringVar(&steps, "steps", "all", "explore: the steps to explore, `all` (every step that runs the node) or resize")
	var output, junit string
	fs.StringVar(&output, "output", "text", "run: print `text` (the transcripts) or json (one JSON document for the whole run); -o for short")
	fs.StringVar(&output, "o", "text", "")
	fs.StringVar(&junit, "junit", "", "run: also write a JUnit XML report to `FILE`")
	var compareGolden, writeGolden bool
	fs.BoolVar(&compareGolden, "golden", false, "run: compare each file's transcript with FILE.golden beside it; a difference, or no golden, fails the file")
	fs.BoolVar(&writeGolden, "write-golden", false, "run: write each file's transcript to FILE.golden beside it (the transcript alone, without the PASS or FAIL lines)")
	var withMetrics bool
	fs.BoolVar(&withMetrics, "metrics", false, "run: print the kubelet's resize metrics in the Prometheus text format after each file's transcript")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: resizesim [flags]            run the built-in walkthrough\n")
		fmt.Fprintf(stderr, "       resizesim [flags] run FILE... run scenario files\n")
		fmt.Fprintf(stderr, "       resizesim [flags] plan FILE... print each resize step's dry-run plan\n")
		fmt.Fprintf(stderr, "       resizesim conform --cri-endpoint unix:///PATH --image IMAGE [--cgroup-root DIR] [--runtime-handler NAME] [--scenarios GLOB]...\n")
		fmt.Fprintf(stderr, "       resizesim [flags] explore FILE... crash or fail every I/O call of every step and judge the end\n")
		fmt.Fprintf(stderr, "       resizesim agent --kubeconfig FILE [--nodes N] [flags]... run nodes on a real API server (resizesim agent -h)\n")
		fmt.Fprintf(stderr, "kubelet versions (a scenario's kubelet key): %s (default %s)\n", supportedVersions(), profile.Default)
		printFlags(fs, stderr)
	}
	// Flags may come before and after the subcommand and the files.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return exitInvalid
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if opts.CRIEndpoint != "" && opts.Image == "" {
		fmt.Fprintln(stderr, "resizesim: --cri-endpoint needs --image")
		return exitInvalid
	}
	if opts.RuntimeHandler != "" && opts.CRIEndpoint == "" {
		fmt.Fprintln(stderr, "resizesim: --runtime-handler needs --cri-endpoint (a handler is the real runtime's)")
		return exitInvalid
	}
	switch driver {
	case "", string(cgroup.DriverCgroupfs), string(cgroup.DriverSystemd):
		opts.CgroupDriver = cgroup.Driver(driver)
	default:
		fmt.Fprintf(stderr, "resizesim: --cgroup-driver %q: want cgroupfs or systemd\n", driver)
		return exitInvalid
	}
	if driver != "" && opts.CRIEndpoint == "" {
		fmt.Fprintln(stderr, "resizesim: --cgroup-driver needs --cri-endpoint (it is the real runtime's)")
		return exitInvalid
	}
	if output != "text" && output != "json" {
		fmt.Fprintf(stderr, "resizesim: --output %q: want text or json\n", output)
		return exitInvalid
	}
	if (output != "text" || junit != "" || compareGolden || writeGolden) && (len(rest) == 0 || rest[0] != "run") {
		fmt.Fprintln(stderr, "resizesim: --output json, --junit, --golden and --write-golden are for the run command")
		return exitInvalid
	}
	golden := goldenIgnore
	switch {
	case compareGolden && writeGolden:
		fmt.Fprintln(stderr, "resizesim: --golden compares with the goldens and --write-golden writes them: give one")
		return exitInvalid
	case compareGolden:
		golden = goldenCompare
	case writeGolden:
		golden = goldenWrite
	}
	if len(rest) == 0 {
		s, err := scenario.Parse("walkthrough.yaml", walkthrough)
		if err != nil {
			fmt.Fprintf(stderr, "resizesim: built-in walkthrough: %v\n", err)
			return exitInvalid
		}
		return runOne(ctx, s, opts, withMetrics, stdout, stderr)
	}
	command := rest[0]
	if command != "run" && command != "plan" && command != "explore" {
		fmt.Fprintf(stderr, "resizesim: unknown command %q\n", rest[0])
		fs.Usage()
		return exitInvalid
	}
	if withMetrics && command != "run" {
		fmt.Fprintf(stderr, "resizesim: --metrics goes with run (and the walkthrough), not %s\n", command)
		return exitInvalid
	}
	opts.Plans = command == "plan"
	files := rest[1:]
	if len(files) == 0 {
		fmt.Fprintf(stderr, "resizesim: %s needs at least one scenario file\n", command)
		return exitInvalid
	}
	if command == "explore" {
		switch steps {
		case "all":
		case "resize":
			xopts.Steps = func(_ int, st scenario.Step) bool { return st.Action == scenario.ActionResize }
		default:
			fmt.Fprintf(stderr, "resizesim: --steps %q: want all or resize\n", steps)
			return exitInvalid
		}
		xopts.Backends = opts
		return exploreFiles(ctx, files, xopts, stdout, stderr)
	}
	return runFiles(ctx, files, opts, runFlags{withMetrics: withMetrics, asJSON: output == "json", junit: junit, golden: golden}, stdout, stderr)
}

// runFlags are run's flags beyond the backends: --metrics, --output json,
// --junit FILE, --golden and --write-golden.
type runFlags struct {
	withMetrics, asJSON bool
	junit               string
	golden              goldenMode
}

// runFiles is run and plan on files: each file's transcript (or plans)
// in turn, or with asJSON one JSON document for them all, and with junit
// a JUnit report written there; goldens compared or written as the flags
// say. Errors go to stderr in every form. The status is the highest of the
// files', or 2 if the report cannot be written.
func runFiles(ctx context.Context, files []string, opts scenario.Options, flags runFlags, stdout, stderr io.Writer) int {
	started := time.Now()
	status := exitOK
	results := make([]fileResult, 0, len(files))
	asJSON, junit := flags.asJSON, flags.junit
	for i, file := range files {
		r := runFile(ctx, file, opts, flags.withMetrics, flags.golden)
		switch {
		case !asJSON:
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			writeText(stdout, stderr, r, opts.Plans)
		case r.outcome == outcomeError:
			fmt.Fprintf(stderr, "resizesim: %s\n", r.errText)
		}
		status = max(status, r.code)
		results = append(results, r)
	}
	elapsed := time.Since(started)
	if junit != "" {
		if err := writeJUnit(junit, results, started, elapsed); err != nil {
			fmt.Fprintf(stderr, "resizesim: --junit: %v\n", err)
			status = exitInvalid
		}
	}
	if asJSON {
		if err := writeJSON(stdout, results, status, elapsed); err != nil {
			fmt.Fprintf(stderr, "resizesim: --output json: %v\n", err)
			return exitInvalid
		}
	}
	return status
}

// printFlags prints the flags as flag.PrintDefaults does, but -o, which
// -output's text names as its short form.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "o" {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue
	})
	shown.SetOutput(w)
	shown.PrintDefaults()
}

// supportedVersions lists the kubelet versions a scenario may name, oldest
// first, for the usage message and the errors about versions.
func supportedVersions() string {
	var names []string
	for _, v := range profile.Versions() {
		names = append(names, v.String())
	}
	return strings.Join(names, ", ")
}

// runOne runs a loaded scenario and prints its transcript (or plans) as
// run does, with withMetrics the metrics after it, and returns its exit
// status.
func runOne(ctx context.Context, s *scenario.Scenario, opts scenario.Options, withMetrics bool, stdout, stderr io.Writer) int {
	r := runScenario(ctx, s, opts, withMetrics)
	writeText(stdout, stderr, r, opts.Plans)
	return r.code
}

// printPlans prints the dry-run plan of each resize step of a scenario
// (its name and file). Plans are about what the node would do; the file's
// expectations are not checked.
func printPlans(w io.Writer, name, file string, plans []scenario.StepPlan) {
	fmt.Fprintf(w, "Scenario: %s (%s)\n", name, file)
	if len(plans) == 0 {
		fmt.Fprintln(w, "no resize steps")
	}
	for _, p := range plans {
		fmt.Fprintf(w, "\n== steps[%d]: resize %s\n", p.Step, p.Pod)
		if p.Err != nil {
			fmt.Fprintf(w, "refused by the API server: %v\n", p.Err)
			continue
		}
		fmt.Fprint(w, p.Plan)
	}
}

// exploreFiles explores each file and prints its table, then a summary of
// all of them. Files that do not apply to the backends are reported as
// SKIP; a file that cannot be loaded or explored makes the status 2.
func exploreFiles(ctx context.Context, files []string, opts explore.Options, stdout, stderr io.Writer) int {
	start := time.Now()
	status := exitOK
	var total explore.Counts
	var skipped int
	gaps := map[string]int{}
	byMode := map[explore.Mode]*explore.Counts{}
	for _, m := range explore.Modes {
		byMode[m] = &explore.Counts{}
	}
	var failing []string
	for i, file := range files {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		s, err := scenario.Load(file)
		if err != nil {
			fmt.Fprintf(stderr, "resizesim: %v\n", err)
			status = exitInvalid
			continue
		}
		rep, err := explore.Scenario(ctx, s, opts)
		if err != nil {
			fmt.Fprintf(stderr, "resizesim: %v\n", err)
			status = exitInvalid
			continue
		}
		rep.WriteTable(stdout)
		if rep.Skipped != "" {
			skipped++
			continue
		}
		c := rep.Counts()
		total.Add(c)
		if !c.OK() {
			failing = append(failing, file)
		}
		for _, p := range rep.Points {
			for _, g := range p.Gaps {
				gaps[g]++
			}
			one := explore.Report{Points: []explore.Point{p}}
			byMode[p.Mode].Add(one.Counts())
		}
	}
	fmt.Fprintf(stdout, "\nSummary: %d files (%d skipped), %s, in %s\n", len(files), skipped, total, time.Since(start).Round(time.Millisecond))
	for _, m := range explore.Modes {
		fmt.Fprintf(stdout, "  %-13s %s\n", m+":", byMode[m])
	}
	for _, g := range explore.Gaps {
		if n := gaps[g.ID]; n > 0 {
			fmt.Fprintf(stdout, "  %d points show the kubelet's gap [%s]\n", n, g.ID)
		}
	}
	if len(failing) > 0 {
		fmt.Fprintf(stdout, "FAIL: broken, stuck or resizelet's own drift in %s\n", strings.Join(failing, ", "))
		return max(status, exitMismatch)
	}
	if status == exitOK {
		fmt.Fprintln(stdout, "PASS: nothing broken or stuck, every drift is the kubelet's own")
	}
	return status
}
