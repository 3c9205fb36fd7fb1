package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resizelet/resizelet/cri"
	"github.com/resizelet/resizelet/cri/remote"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/host"
	"github.com/resizelet/resizelet/resize/kubeapi"
	"github.com/resizelet/resizelet/resize/profile"
)

// agentNode is one node the agent runs, with what it runs on.
type agentNode struct {
	name    string
	backend *resize.Backend
	api     *kubeapi.API
	node    *resize.Node
}

// runAgent is resizesim agent: N resizelet nodes on a real API server
// (package resize/kubeapi), each registered as a v1.Node, with its lease
// and status kept fresh, admitting the pods bound to it and handling every
// resize of them, on the wall clock, until SIGINT or SIGTERM. It then
// stops the nodes as a stopped kubelet stops: their Node objects, pods,
// and on real backends containers and cgroups, are left as they are
// (--cleanup removes what the nodes created on real backends).
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resizesim agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "the API server's kubeconfig `FILE` (default $KUBECONFIG)")
	nodes := fs.Int("nodes", 1, "how many nodes to run")
	prefix := fs.String("name-prefix", "resizelet-", "the nodes' names are this `PREFIX` and their number, from 0")
	first := fs.Int("first", 0, "the number of the first node, so that agents can serve disjoint sets of names")
	cpu := fs.String("cpu", "16", "each node's cpu capacity (and allocatable)")
	memory := fs.String("memory", "64Gi", "each node's memory capacity (and allocatable)")
	pods := fs.String("pods", "110", "each node's pod capacity (and allocatable)")
	storage := fs.String("ephemeral-storage", "100Gi", "each node's ephemeral-storage capacity (and allocatable)")
	kubelet := fs.String("kubelet", string(profile.Default), "the Kubernetes `VERSION` the nodes reproduce ("+supportedVersions()+")")
	var gates gateFlag
	fs.Var(&gates, "feature-gates", "feature gates, `A=true,B=false` (the resize path's gates of that version)")
	reconcile := fs.Bool("reconcile-pod-cgroups", false, "run the nodes with ReconcilePodCgroups (resizelet's opt-in fix)")
	flush := fs.Bool("flush-checkpoints", false, "run the nodes with FlushCheckpoints (resizelet's opt-in fix)")
	checkpoints := fs.String("checkpoint-dir", "", "keep each node's checkpoints in `DIR`/NAME, so that a restarted agent goes on where it stopped (default: in memory)")
	cgroupRoot := fs.String("cgroup-root", "", "run pod and container cgroups in the real cgroup filesystem mounted at `DIR`")
	endpoint := fs.String("cri-endpoint", "", "run containers in the CRI runtime at `unix:///PATH`")
	image := fs.String("image", "", "the `image` containers run on a real runtime")
	cleanup := fs.Bool("cleanup", false, "on real backends, remove the containers and cgroups the nodes created when the agent stops")
	qps := fs.Float64("kube-api-qps", 50, "each node's client's queries per second to the API server (the kubelet's default)")
	burst := fs.Int("kube-api-burst", 100, "each node's client's burst (the kubelet's default)")
	verbose := fs.Bool("v", false, "log at debug level")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: resizesim agent --kubeconfig FILE [--nodes N] [flags]\n")
		fmt.Fprintf(stderr, "runs N resizelet nodes on a real API server, on the wall clock, until SIGINT or SIGTERM\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "resizesim agent: "+format+"\n", a...)
		return exitInvalid
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case *kubeconfig == "":
		return fail("--kubeconfig is required (or $KUBECONFIG)")
	case *nodes < 1:
		return fail("--nodes %d: want at least 1", *nodes)
	case *first < 0:
		return fail("--first %d: want 0 or more", *first)
	case *endpoint != "" && *image == "":
		return fail("--cri-endpoint needs --image")
	}
	version, err := profile.Parse(*kubelet)
	if err != nil {
		return fail("--kubelet: %v", err)
	}
	capacity := v1.ResourceList{}
	for name, s := range map[v1.ResourceName]string{v1.ResourceCPU: *cpu, v1.ResourceMemory: *memory, v1.ResourcePods: *pods, v1.ResourceEphemeralStorage: *storage} {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return fail("--%s %q: %v", name, s, err)
		}
		capacity[name] = q
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fail("--kubeconfig %s: %v", *kubeconfig, err)
	}
	restCfg.QPS, restCfg.Burst = float32(*qps), *burst
	configs := make([]resize.NodeConfig, *nodes)
	for i := range configs {
		configs[i] = resize.NodeConfig{
			Name: *prefix + strconv.Itoa(*first+i), Capacity: capacity.DeepCopy(), Allocatable: capacity.DeepCopy(), Profile: version,
			FeatureGates: gates.m, ReconcilePodCgroups: *reconcile, FlushCheckpoints: *flush,
		}
		// A node the kubelet would not start with is refused before
		// anything reaches the API server: a simulated backend checks
		// the configuration as every backend does, and holds nothing.
		b, err := resize.Simulated(configs[i])
		if err != nil {
			return fail("node %s: %v", configs[i].Name, err)
		}
		_ = b.Close(ctx)
	}
	// client-go retries an unreachable server quietly and for ever: ask
	// for its version first, with a deadline, so that a wrong address is
	// an error at once.
	probe := rest.CopyConfig(restCfg)
	probe.Timeout = 30 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fail("--kubeconfig %s: %v", *kubeconfig, err)
	}
	server, err := dc.ServerVersion()
	if err != nil {
		return fail("the API server at %s does not answer: %v", restCfg.Host, err)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()

	var running []*agentNode
	stopAll := func() {
		for _, an := range running {
			an.stop(ctx, *cleanup, log)
		}
	}
	var wg sync.WaitGroup
	for _, cfg := range configs {
		an, err := startAgentNode(ctx, cfg, restCfg, agentBackend{cgroupRoot: *cgroupRoot, endpoint: *endpoint, image: *image}, *checkpoints, log)
		if err != nil {
			cancel()
			wg.Wait()
			stopAll()
			return fail("node %s: %v", cfg.Name, err)
		}
		running = append(running, an)
		// Registered before the agent says it is ready, so that whoever
		// waits for that line finds the Node.
		registered, err := an.api.Register(ctx, an.node)
		if err != nil {
			cancel()
			wg.Wait()
			stopAll()
			return fail("node %s: %v", cfg.Name, err)
		}
		wg.Go(func() {
			if err := an.api.Run(ctx, an.node, kubeapi.RunOptions{Registered: registered}); err != nil {
				log.Error("node stopped", "node", an.name, "err", err)
				cancel()
			}
		})
	}
	names := make([]string, len(running))
	for i, an := range running {
		names[i] = an.name
	}
	fmt.Fprintf(stdout, "resizesim agent: %d node(s) on %s (Kubernetes %s), reproducing kubelet %s: %s\n", len(running), restCfg.Host, server.GitVersion, version.Release(), abbreviate(names))
	fmt.Fprintln(stdout, "resizesim agent: on the wall clock (virtual time is not available against a real API server); SIGINT or SIGTERM stops the nodes")
	<-ctx.Done()
	wg.Wait()
	stopAll()
	fmt.Fprintf(stdout, "resizesim agent: stopped %d node(s); their Node objects and pods are left as a stopped kubelet leaves them\n", len(running))
	return exitOK
}

// agentBackend is what the agent's nodes run on: simulated unless a cgroup
// root or a CRI endpoint is given.
type agentBackend struct {
	cgroupRoot, endpoint, image string
}

func (b agentBackend) open(ctx context.Context, cfg resize.NodeConfig) (*resize.Backend, error) {
	root := b.cgroupRoot
	if root != "" {
		var err error
		if root, err = filepath.Abs(root); err != nil {
			return nil, fmt.Errorf("--cgroup-root %s: %w", b.cgroupRoot, err)
		}
	}
	// The in-memory runtime stamps containers with the wall clock, as the
	// node's own clock is.
	wall := resize.WithSimContainerd(cri.WithClock(time.Now))
	switch {
	case b.endpoint != "":
		opts := []host.Option{host.WithRemoteOptions(remote.WithCallTimeout(30 * time.Second))}
		if root != "" {
			opts = append(opts, host.WithCgroupRoot(root))
		}
		return host.Remote(ctx, b.endpoint, b.image, cfg, opts...)
	case root != "":
		return host.Cgroups(cfg, host.WithCgroupRoot(root), host.WithBackendOptions(wall))
	}
	return resize.Simulated(cfg, wall)
}

// startAgentNode opens the node's backend, its API (which lists the pods
// bound to it) and the node on them.
func startAgentNode(ctx context.Context, cfg resize.NodeConfig, rest *rest.Config, b agentBackend, checkpoints string, log *slog.Logger) (*agentNode, error) {
	backend, err := b.open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rc := *rest
	rc.UserAgent = "resizelet/" + cfg.Name
	client, err := kubernetes.NewForConfig(&rc)
	if err != nil {
		_ = backend.Close(ctx)
		return nil, err
	}
	api, err := kubeapi.New(ctx, client, cfg.Name, kubeapi.Options{Logger: log})
	if err != nil {
		_ = backend.Close(ctx)
		return nil, err
	}
	deps := resize.Deps{Cluster: api, Clock: resize.WallClock{}, BoundPodsOnly: true}
	if checkpoints != "" {
		deps.CheckpointDir = filepath.Join(checkpoints, cfg.Name)
		if err := os.MkdirAll(deps.CheckpointDir, 0o700); err != nil {
			api.Close()
			_ = backend.Close(ctx)
			return nil, err
		}
	}
	node, err := resize.NewNode(ctx, backend.Config(), backend.Deps(deps))
	if err != nil {
		api.Close()
		_ = backend.Close(ctx)
		return nil, err
	}
	return &agentNode{name: cfg.Name, backend: backend, api: api, node: node}, nil
}

// stop stops the node as a stopped kubelet stops, and with cleanup
// removes what it created on a real backend (a simulated one holds
// nothing outside the process).
func (an *agentNode) stop(ctx context.Context, cleanup bool, log *slog.Logger) {
	if err := an.node.Close(); err != nil {
		log.Warn("closing the node", "node", an.name, "err", err)
	}
	an.api.Close()
	if cleanup {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := an.backend.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("removing what the node created", "node", an.name, "err", err)
		}
	}
}

// abbreviate lists names, or the first and last of many.
func abbreviate(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, %s, ... %s", names[0], names[1], names[len(names)-1])
}

// gateFlag is --feature-gates: A=true,B=false.
type gateFlag struct{ m map[string]bool }

func (g *gateFlag) String() string { return "" }

func (g *gateFlag) Set(s string) error {
	if g.m == nil {
		g.m = map[string]bool{}
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		b, err := strconv.ParseBool(v)
		if !ok || k == "" || err != nil {
			return fmt.Errorf("%q: want NAME=true or NAME=false", kv)
		}
		g.m[k] = b
	}
	return nil
}
