package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/resizelet/resizelet/resize/profile"
)

// defaultPatch is the patch kind the updater sends by default: the VPA
// updater's JSON patch of the resize subresource. -patch strategic sends
// the strategic merge patch kubectl would instead.
const defaultPatch = "json"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command without the process around it, for tests: 0 when the
// run ended and its summary holds together, 1 when it does not, 2 for bad
// flags or a failed run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vpa", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := Config{}
	var kubelet string
	fs.IntVar(&cfg.Nodes, "nodes", 10, "nodes in the fleet, every fifth large (with -kubeconfig: how many of the agents' nodes to wait for and use; unset, those there)")
	fs.IntVar(&cfg.PodsPerNode, "pods", 100, "pods on each node at the start")
	fs.DurationVar(&cfg.Duration, "duration", time.Hour, "simulated time (wall-clock time with -kubeconfig)")
	fs.DurationVar(&cfg.Interval, "interval", time.Minute, "how often the updater runs, in simulated time (wall-clock time with -kubeconfig, each round playing a minute of the workloads' hour)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the usage noise and the pod names")
	fs.StringVar(&cfg.Patch, "patch", defaultPatch, "the resize patch: json (the VPA updater's JSON patch) or strategic")
	fs.StringVar(&kubelet, "kubelet", string(profile.Default), "the Kubernetes version of the nodes and the API server: 1.35, 1.36 or 1.37")
	fs.BoolVar(&cfg.Quiet, "quiet", false, "print the summary only")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "run on the real API server of this kubeconfig `FILE`, with the nodes resizesim agents run there, on the wall clock")
	fs.StringVar(&cfg.NodePrefix, "node-prefix", "resizelet-", "with -kubeconfig: use the nodes whose names start with this `PREFIX` (the agents' --name-prefix)")
	fs.BoolVar(&cfg.Keep, "keep", false, "with -kubeconfig: keep the run's namespace and its pods at the end")
	qps := fs.Float64("kube-api-qps", 50, "with -kubeconfig: the client's queries per second")
	fs.IntVar(&cfg.Burst, "kube-api-burst", 100, "with -kubeconfig: the client's burst")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vpa: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg.QPS = float32(*qps)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.Kubeconfig != "" {
		return runReal(ctx, cfg, set, stdout, stderr)
	}
	for _, name := range []string{"node-prefix", "keep", "kube-api-qps", "kube-api-burst"} {
		if set[name] {
			fmt.Fprintf(stderr, "vpa: -%s needs -kubeconfig\n", name)
			return 2
		}
	}
	// From 1.35 the kubelet records ResizeCompleted with the resize it
	// completed, which the updater times the resizes by.
	if !slices.Contains([]profile.Version{profile.V135, profile.V136, profile.V137}, profile.Version(kubelet)) {
		fmt.Fprintf(stderr, "vpa: -kubelet %q: want 1.35, 1.36 or 1.37\n", kubelet)
		return 2
	}
	cfg.Kubelet = profile.Version(kubelet)
	cfg.Progress = stderr
	began := time.Now()
	sum, err := Run(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "vpa: %v\n", err)
		return 2
	}
	return finish(sum, cfg, began, stdout, stderr)
}

// finish prints the summary and checks it.
func finish(sum *Summary, cfg Config, began time.Time, stdout, stderr io.Writer) int {
	sum.Print(stdout, cfg)
	fmt.Fprintf(stdout, "ran in %.1fs\n", time.Since(began).Seconds())
	if problems := sum.Check(); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "vpa: the summary does not hold together: %s\n", p)
		}
		return 1
	}
	return 0
}

// runReal is the command with -kubeconfig: the run on a real API server
// (RunReal), until it ends or SIGINT or SIGTERM stops it, after which it
// still deletes its namespace. The nodes' kubelet version is the agents'
// to choose; -nodes, when given, is how many nodes to wait for.
func runReal(ctx context.Context, cfg Config, set map[string]bool, stdout, stderr io.Writer) int {
	if set["kubelet"] {
		fmt.Fprintln(stderr, "vpa: -kubelet: with -kubeconfig the agents' --kubelet decides the nodes' version")
		return 2
	}
	if !set["nodes"] {
		cfg.Nodes = 0
	}
	cfg.Kubelet = ""
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	sum, err := RunReal(ctx, cfg, stdout)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "vpa: interrupted: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "vpa: %v\n", err)
		return 2
	}
	return finish(sum, cfg, began, stdout, stderr)
}
