package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConformArgs: conform is found as the subcommand among resizesim's
// flags, whichever side of it they are on, and nothing else is.
func TestConformArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // nil: not conform
	}{
		{[]string{"conform", "--cri-endpoint", "unix:///x", "--image", "i"}, []string{"--cri-endpoint", "unix:///x", "--image", "i"}},
		{[]string{"--cri-endpoint", "unix:///x", "conform", "--image=i"}, []string{"--cri-endpoint", "unix:///x", "--image=i"}},
		{[]string{"--image", "conform", "run", "f.yaml"}, nil}, // an image named conform
		{[]string{"run", "conform"}, nil}, // a file named conform
		{[]string{"--", "conform"}, nil},
		// A runtime handler named conform, then the subcommand.
		{[]string{"--runtime-handler", "conform", "conform", "--image", "i"}, []string{"--runtime-handler", "conform", "--image", "i"}},
		{nil, nil},
	} {
		got, ok := conformArgs(tc.args)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("conformArgs(%q) = %q, %v; want %q", tc.args, got, ok, tc.want)
		}
	}
}

// TestConformRefuses: resizesim conform refuses bad flags and an endpoint
// that is not a CRI runtime before it creates anything, with exit status 2
// and an error that names the endpoint and what is wrong with it.
func TestConformRefuses(t *testing.T) {
	dir, err := os.MkdirTemp("", "rsim")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	httpSock := filepath.Join(dir, "http.sock")
	l, err := net.Listen("unix", httpSock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler()}
	go srv.Serve(l)
	defer srv.Close()

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no endpoint", []string{"conform", "--image", "busybox"}, []string{"--cri-endpoint and --image are required"}},
		{"no image", []string{"conform", "--cri-endpoint", "unix://" + httpSock}, []string{"--cri-endpoint and --image are required"}},
		{"stray argument", []string{"conform", "--cri-endpoint", "unix://" + httpSock, "--image", "i", "f.yaml"}, []string{`unexpected argument "f.yaml"`, "--scenarios"}},
		{"no scenario matches", []string{"conform", "--cri-endpoint", "unix://" + httpSock, "--image", "i", "--scenarios", filepath.Join(dir, "*.yaml")}, []string{"no file matches"}},
		{"missing socket", []string{"conform", "--cri-endpoint", "unix://" + filepath.Join(dir, "none.sock"), "--image", "i"}, []string{"none.sock", "not a CRI runtime", "no such file or directory"}},
		{"HTTP server", []string{"--image", "i", "conform", "--cri-endpoint", "unix://" + httpSock}, []string{"CRI endpoint unix://" + httpSock, "no gRPC server answers there", "not a CRI runtime"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != exitInvalid {
				t.Errorf("exit status %d, want %d", code, exitInvalid)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("a report was printed:\n%s", stdout.String())
			}
		})
	}
}
