// Command critool is the small CRI client examples/realhost/containerd.sh
// uses to tear down what the tests left in a private containerd: it stops
// and removes every pod sandbox and container through the CRI, as the
// kubelet would, before containerd itself is stopped.
//
//	go run ./examples/realhost/cmd/critool -endpoint unix:///tmp/rl/containerd.sock stop-all
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/resizelet/resizelet/cri/remote"
)

func main() {
	endpoint := flag.String("endpoint", "", "CRI endpoint, unix:///PATH")
	flag.Parse()
	if *endpoint == "" || flag.NArg() != 1 || flag.Arg(0) != "stop-all" {
		fmt.Fprintln(os.Stderr, "usage: critool -endpoint unix:///PATH stop-all")
		os.Exit(2)
	}
	if err := stopAll(*endpoint); err != nil {
		fmt.Fprintln(os.Stderr, "critool:", err)
		os.Exit(1)
	}
}

// stopAll stops and removes every container, then every sandbox. It goes on
// after a failure and returns the first.
func stopAll(endpoint string) error {
	ctx := context.Background()
	rt, err := remote.Dial(ctx, endpoint, remote.WithCallTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer rt.Close()
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	cs, err := rt.ListContainers(ctx, nil)
	keep(err)
	for _, c := range cs {
		keep(rt.StopContainer(ctx, c.Id, 0))
		keep(rt.RemoveContainer(ctx, c.Id))
	}
	sbs, err := rt.ListPodSandbox(ctx, nil)
	keep(err)
	for _, sb := range sbs {
		keep(rt.StopPodSandbox(ctx, sb.Id))
		keep(rt.RemovePodSandbox(ctx, sb.Id))
	}
	fmt.Fprintf(os.Stderr, "critool: removed %d containers and %d sandboxes\n", len(cs), len(sbs))
	return first
}
