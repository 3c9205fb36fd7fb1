package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deadKubeconfig is a kubeconfig of an API server that is not there
// (port 1 of the loopback), for the runs that must stop before they would
// talk to one.
const deadKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: nowhere
  context: {cluster: nowhere, user: nobody}
current-context: nowhere
users:
- name: nobody
  user: {token: none}
`

// TestAgentRefusesBadFlags: resizesim agent refuses a bad command line
// with exit status 2 and a message that names what is wrong, before it
// starts a node or talks to an API server, and prints nothing on stdout
// (whose first line says the nodes run).
func TestAgentRefusesBadFlags(t *testing.T) {
	// The default of --kubeconfig is $KUBECONFIG: unset, so that the
	// case without it is one.
	t.Setenv("KUBECONFIG", "")
	kc := writeFile(t, "kubeconfig", deadKubeconfig)
	notKubeconfig := writeFile(t, "notkubeconfig", "name: [\n")
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no kubeconfig", nil, []string{"resizesim agent: --kubeconfig is required (or $KUBECONFIG)"}},
		{"an argument", []string{"--kubeconfig", kc, "extra"}, []string{`resizesim agent: unexpected argument "extra"`}},
		{"unknown flag", []string{"--kubeconfig", kc, "--bogus"}, []string{"flag provided but not defined: -bogus", "usage: resizesim agent --kubeconfig FILE"}},
		{"no nodes", []string{"--kubeconfig", kc, "--nodes", "0"}, []string{"resizesim agent: --nodes 0: want at least 1"}},
		{"negative first", []string{"--kubeconfig", kc, "--first", "-1"}, []string{"resizesim agent: --first -1: want 0 or more"}},
		{"runtime without image", []string{"--kubeconfig", kc, "--cri-endpoint", "unix:///run/x.sock"}, []string{"resizesim agent: --cri-endpoint needs --image"}},
		{"unknown kubelet version", []string{"--kubeconfig", kc, "--kubelet", "1.38"}, []string{`resizesim agent: --kubelet: unknown Kubernetes version "1.38": want one of 1.33, 1.34, 1.35, 1.36, 1.37`}},
		{"cpu that is no quantity", []string{"--kubeconfig", kc, "--cpu", "lots"}, []string{`resizesim agent: --cpu "lots": quantities must match`}},
		{"memory that is no quantity", []string{"--kubeconfig", kc, "--memory", "64GB"}, []string{`resizesim agent: --memory "64GB": quantities must match`}},
		{"malformed feature gates", []string{"--kubeconfig", kc, "--feature-gates", "InPlacePodVerticalScaling"}, []string{`invalid value "InPlacePodVerticalScaling" for flag -feature-gates`, "want NAME=true or NAME=false"}},
		{"missing kubeconfig", []string{"--kubeconfig", missing}, []string{"resizesim agent: --kubeconfig " + missing + ": ", "no such file or directory"}},
		{"kubeconfig that is none", []string{"--kubeconfig", notKubeconfig}, []string{"resizesim agent: --kubeconfig " + notKubeconfig + ": error loading config file"}},
		// These pass the flags' own checks and are refused by the node's
		// configuration, which is checked before anything is sent to the
		// API server.
		{"negative cpu", []string{"--kubeconfig", kc, "--cpu", "-1"}, []string{"resizesim agent: node resizelet-0: ", "cpu: -1 is negative"}},
		{"unknown feature gate", []string{"--kubeconfig", kc, "--feature-gates", "NoSuchGate=true"}, []string{"resizesim agent: node resizelet-0: ", "unrecognized feature gate: NoSuchGate"}},
		{"gate of a later kubelet", []string{"--kubeconfig", kc, "--kubelet", "1.34", "--feature-gates", "InPlacePodVerticalScalingInitContainers=true"}, []string{"unrecognized feature gate: InPlacePodVerticalScalingInitContainers"}},
		{"node name that is no DNS name", []string{"--kubeconfig", kc, "--name-prefix", "Node_"}, []string{`resizesim agent: node Node_0: `, `invalid node name "Node_0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A run that got past its checks would wait for the API
			// server that is not there: the deadline ends it, and the
			// messages below tell.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, append([]string{"agent"}, tt.args...), &stdout, &stderr)
			if code != exitInvalid {
				t.Errorf("exit status %d, want %d", code, exitInvalid)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
		})
	}
}
