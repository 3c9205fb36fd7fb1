package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunMetrics: run --metrics prints each file's resize metrics in the
// Prometheus text format after its transcript and before its verdict, each
// file on a registry of its own; without the flag there are none; plan and
// explore do not take it.
func TestRunMetrics(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--metrics", good, good}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	out := stdout.String()
	const header = "\n== metrics (Prometheus text format)\n"
	files := strings.Split(out, "\nPASS "+good+"\n")
	if len(files) != 3 || files[2] != "" {
		t.Fatalf("want two files, each ending with PASS:\n%s", out)
	}
	for i, file := range files[:2] {
		_, metrics, ok := strings.Cut(file, header)
		if !ok {
			t.Fatalf("file %d has no metrics section:\n%s", i, file)
		}
		for _, want := range []string{
			"# HELP kubelet_container_requested_resizes_total [ALPHA] Number of requested resizes, counted at the container level.",
			"# TYPE kubelet_container_requested_resizes_total counter\n",
			// Each file counts its own resize only.
			`kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"} 1` + "\n",
			"# TYPE kubelet_pod_resize_duration_milliseconds histogram\n",
			`kubelet_pod_resize_duration_milliseconds_bucket{success="true",le="10"} 1` + "\n",
			`kubelet_pod_resize_duration_milliseconds_count{success="true"} 1` + "\n",
			"kubelet_pod_in_progress_resizes 0\n",
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("file %d's metrics lack %q:\n%s", i, want, metrics)
			}
		}
		for _, absent := range []string{"kubelet_pod_pending_resizes{", "kubelet_pod_infeasible_resizes_total{", "== end:"} {
			if strings.Contains(metrics, absent) {
				t.Errorf("file %d's metrics have %q:\n%s", i, absent, metrics)
			}
		}
	}

	stdout.Reset()
	if code := run(context.Background(), []string{"run", good}, &stdout, &stderr); code != exitOK || strings.Contains(stdout.String(), "kubelet_") {
		t.Errorf("without --metrics: exit %d, output:\n%s", code, stdout.String())
	}
	for _, command := range []string{"plan", "explore"} {
		stderr.Reset()
		if code := run(context.Background(), []string{command, "--metrics", good}, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), "--metrics goes with run") {
			t.Errorf("%s --metrics: exit %d, stderr %s", command, code, stderr.String())
		}
	}
}

// TestRunMetricsJSON: with -o json, --metrics puts each file's metrics in
// its entry instead of printing them.
func TestRunMetricsJSON(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "-o", "json", "--metrics", good}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	var doc struct {
		Files []struct {
			Metrics string `json:"metrics"`
		} `json:"files"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, stdout.String())
	}
	want := `kubelet_container_requested_resizes_total{operation="increase",requirement="requests",resource="cpu"} 1` + "\n"
	if len(doc.Files) != 1 || !strings.Contains(doc.Files[0].Metrics, want) {
		t.Fatalf("files[0].metrics lacks %q:\n%s", want, stdout.String())
	}
}
