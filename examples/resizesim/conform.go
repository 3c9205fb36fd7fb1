package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
	"github.com/resizelet/resizelet/cgroup/systemd"
	"github.com/resizelet/resizelet/cri/conform"
	"github.com/resizelet/resizelet/resize/scenario"
)

// Exit statuses of conform beyond those of run: a signal ends it with
// 128 plus the signal's number, as a shell reports a process it killed,
// once the cleanup is done.
const exitSignalBase = 128

// conformValueFlags are the flags of resizesim and of conform that take
// a value as the next argument, for finding the subcommand among them.
var conformValueFlags = map[string]bool{"cgroup-root": true, "cri-endpoint": true, "image": true, "runtime-handler": true, "cgroup-driver": true, "scenarios": true, "steps": true,
	"o": true, "output": true, "junit": true}

// conformArgs finds the subcommand conform as the first argument that is
// not a flag or a flag's value, and returns the arguments without it.
func conformArgs(args []string) ([]string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil, false
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && conformValueFlags[name] {
				i++
			}
			continue
		}
		if a != "conform" {
			return nil, false
		}
		return append(append([]string{}, args[:i]...), args[i+1:]...), true
	}
	return nil, false
}

// runConform is resizesim conform: the CRI resize conformance check of
// package cri/conform against a runtime's socket, then, with --scenarios,
// scenario files on the same runtime as resizesim run does. SIGINT and
// SIGTERM stop the checks; the run's sandbox, containers and cgroups are
// removed before the command exits (a second signal does not cut that
// short).
func runConform(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resizesim conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("cri-endpoint", "", "the CRI runtime to check, at `unix:///PATH`")
	image := fs.String("image", "", "an `image` the runtime has, with sh, sleep and dd (busybox)")
	cgroupRoot := fs.String("cgroup-root", "/sys/fs/cgroup", "the cgroup filesystem the runtime writes, mounted at `DIR`")
	handler := fs.String("runtime-handler", "", "run the checks' sandbox and the scenarios' with the runtime `handler` (a RuntimeClass's handler, such as containerd's runtimes.crun); empty is the runtime's default")
	driver := fs.String("cgroup-driver", "cgroupfs", "the runtime's cgroup `driver`, cgroupfs or systemd (containerd's SystemdCgroup); with systemd the pod's slices are named as the kubelet's systemd driver names them and removed through systemd, which must run the host")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var patterns []string
	fs.Func("scenarios", "also run the scenario files matching `GLOB` on the runtime (repeatable)", func(s string) error {
		patterns = append(patterns, s)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: resizesim conform --cri-endpoint unix:///PATH --image IMAGE [--cgroup-root DIR] [--runtime-handler NAME] [--cgroup-driver systemd] [--json] [--scenarios GLOB]...\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "resizesim conform: unexpected argument %q (scenario files go with --scenarios)\n", fs.Arg(0))
		return exitInvalid
	}
	if *endpoint == "" || *image == "" {
		fmt.Fprintln(stderr, "resizesim conform: --cri-endpoint and --image are required")
		fs.Usage()
		return exitInvalid
	}
	if *driver != string(cgroup.DriverCgroupfs) && *driver != string(cgroup.DriverSystemd) {
		fmt.Fprintf(stderr, "resizesim conform: --cgroup-driver %q: want cgroupfs or systemd\n", *driver)
		return exitInvalid
	}
	var files []string
	for _, p := range patterns {
		matches, err := filepath.Glob(p)
		if err != nil || len(matches) == 0 {
			fmt.Fprintf(stderr, "resizesim conform: --scenarios %s: no file matches\n", p)
			return exitInvalid
		}
		files = append(files, matches...)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	var mu sync.Mutex
	var caught os.Signal
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-signals:
				mu.Lock()
				first := caught == nil
				if first {
					caught = s
				}
				mu.Unlock()
				if first {
					fmt.Fprintf(stderr, "resizesim conform: %v: stopping, then removing what the run created\n", s)
					cancel()
				} else {
					fmt.Fprintf(stderr, "resizesim conform: %v: still removing what the run created\n", s)
				}
			case <-done:
				return
			}
		}
	}()
	signalled := func() int {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := caught.(syscall.Signal); ok {
			return exitSignalBase + int(s)
		}
		return 0
	}

	rt, version, err := conform.Dial(ctx, *endpoint, 0)
	if err != nil {
		fmt.Fprintf(stderr, "resizesim conform: %v\n", err)
		if code := signalled(); code != 0 {
			return code
		}
		return exitInvalid
	}
	defer rt.Close()
	fsys, err := cgroupfs.New(*cgroupRoot)
	if err != nil {
		fmt.Fprintf(stderr, "resizesim conform: --cgroup-root %s: %v\n", *cgroupRoot, err)
		return exitInvalid
	}
	var cg cgroup.Manager = fsys
	if *driver == string(cgroup.DriverSystemd) {
		// The runtime makes the pod's slices through systemd; the
		// cleanup stops them through systemd too.
		sd, err := systemd.Open(ctx, fsys)
		if err != nil {
			fmt.Fprintf(stderr, "resizesim conform: --cgroup-driver systemd: %v\n", err)
			return exitInvalid
		}
		defer sd.Close()
		cg = sd
	}
	report, err := conform.Run(ctx, conform.Options{
		Runtime:        rt,
		Cgroups:        cg,
		CgroupDriver:   cgroup.Driver(*driver),
		Image:          *image,
		Endpoint:       *endpoint,
		Version:        version,
		RuntimeHandler: *handler,
		Progress:       func(line string) { fmt.Fprintf(stderr, "conform: %s\n", line) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "resizesim conform: %v\n", err)
		return exitInvalid
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintf(stderr, "resizesim conform: %v\n", err)
			return exitInvalid
		}
	} else {
		report.WriteText(stdout)
	}
	status := exitOK
	switch {
	case report.Interrupted:
		if code := signalled(); code != 0 {
			return code
		}
		return exitInvalid
	case report.SetupError != "":
		status = exitInvalid
	case !report.Passed():
		status = exitMismatch
	}

	opts := scenario.Options{CgroupRoot: *cgroupRoot, CRIEndpoint: *endpoint, Image: *image, RuntimeHandler: *handler, CgroupDriver: cgroup.Driver(*driver)}
	for _, file := range files {
		if code := signalled(); code != 0 {
			return code
		}
		fmt.Fprintln(stdout)
		code := exitInvalid
		if s, err := scenario.Load(file); err != nil {
			fmt.Fprintf(stderr, "resizesim: %v\n", err)
		} else {
			code = runOne(ctx, s, opts, false, stdout, stderr)
		}
		status = max(status, code)
	}
	if code := signalled(); code != 0 {
		return code
	}
	return status
}
