// Command resizesim runs resize scenarios against the resizelet engine and
// prints what the kubelet did, step by step.
//
//	resizesim                      # the built-in walkthrough (the "In-Place Pod Resize GA" story)
//	resizesim run FILE...          # run scenario files
//	resizesim plan FILE...         # for each resize step, what the node would do (a dry run), then do it
//	resizesim conform --cri-endpoint unix:///PATH --image IMAGE  # check a CRI runtime's in-place resize (conform.go)
//
// Flags (before or after run):
//
//	--cgroup-root DIR              # real cgroup filesystem mounted at DIR
//	--cri-endpoint unix:///PATH    # real CRI runtime at that socket
//	--image NAME                   # the image containers run on a real runtime
//
// The exit status is 0 when every expectation held, 1 when any failed (each
// mismatch is printed as a diff with its step, key path, wanted and found
// values) and 2 when a file is not a valid scenario or the run could not be
// done. The scenario format is described in the README and implemented by
// package resize/scenario.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
	fs := flag.NewFlagSet("resizesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts scenario.Options
	fs.StringVar(&opts.CgroupRoot, "cgroup-root", "", "run pod and container cgroups in the real cgroup filesystem mounted at `DIR`")
	fs.StringVar(&opts.CRIEndpoint, "cri-endpoint", "", "run containers in the CRI runtime at `unix:///PATH`")
	fs.StringVar(&opts.Image, "image", "", "the `image` containers run on a real runtime")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: resizesim [flags]            run the built-in walkthrough\n")
		fmt.Fprintf(stderr, "       resizesim [flags] run FILE... run scenario files\n")
		fmt.Fprintf(stderr, "       resizesim [flags] plan FILE... print each resize step's dry-run plan\n")
		fmt.Fprintf(stderr, "       resizesim conform --cri-endpoint unix:///PATH --image IMAGE [--cgroup-root DIR] [--scenarios GLOB]...\n")
		fs.PrintDefaults()
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
	if len(rest) == 0 {
		s, err := scenario.Parse("walkthrough.yaml", walkthrough)
		if err != nil {
			fmt.Fprintf(stderr, "resizesim: built-in walkthrough: %v\n", err)
			return exitInvalid
		}
		return runOne(ctx, s, opts, stdout, stderr)
	}
	command := rest[0]
	if command != "run" && command != "plan" {
		fmt.Fprintf(stderr, "resizesim: unknown command %q\n", rest[0])
		fs.Usage()
		return exitInvalid
	}
	opts.Plans = command == "plan"
	files := rest[1:]
	if len(files) == 0 {
		fmt.Fprintf(stderr, "resizesim: %s needs at least one scenario file\n", command)
		return exitInvalid
	}
	status := exitOK
	for i, file := range files {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		code := exitInvalid
		if s, err := scenario.Load(file); err != nil {
			fmt.Fprintf(stderr, "resizesim: %v\n", err)
		} else {
			code = runOne(ctx, s, opts, stdout, stderr)
		}
		status = max(status, code)
	}
	return status
}

func runOne(ctx context.Context, s *scenario.Scenario, opts scenario.Options, stdout, stderr io.Writer) int {
	res, err := scenario.Run(ctx, s, opts)
	if err != nil {
		var se *scenario.Error
		switch {
		case errors.As(err, &se):
			fmt.Fprintf(stderr, "resizesim: %v\n", err)
		case errors.Is(err, scenario.ErrNotApplicable):
			fmt.Fprintf(stdout, "SKIP %s: %v\n", s.File, err)
			return exitOK
		default:
			fmt.Fprintf(stderr, "resizesim: %s: %v\n", s.File, err)
		}
		return exitInvalid
	}
	if opts.Plans {
		printPlans(stdout, s, res.Plans)
		return exitOK
	}
	stdout.Write(res.Transcript)
	if len(res.Mismatches) == 0 {
		fmt.Fprintf(stdout, "\nPASS %s\n", s.File)
		return exitOK
	}
	fmt.Fprintf(stdout, "\nFAIL %s: %d expectation(s) did not hold\n", s.File, len(res.Mismatches))
	for _, m := range res.Mismatches {
		fmt.Fprintf(stdout, "%s: %s\n", s.File, m)
	}
	return exitMismatch
}

// printPlans prints the dry-run plan of each resize step of a scenario.
// Plans are about what the node would do; the file's expectations are not
// checked.
func printPlans(w io.Writer, s *scenario.Scenario, plans []scenario.StepPlan) {
	fmt.Fprintf(w, "Scenario: %s (%s)\n", s.Name, s.File)
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
