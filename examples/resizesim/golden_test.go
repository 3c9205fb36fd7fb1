package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunGoldens: --write-golden writes FILE.golden, the transcript
// without the PASS line; --golden then passes, and fails the file (exit 1,
// the difference printed) once the golden differs or is missing.
func TestRunGoldens(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	golden := strings.TrimSuffix(good, ".yaml") + ".golden"
	runOK := func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != want {
			t.Fatalf("resizesim %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := runOK(exitMismatch, "run", "--golden", good); !strings.Contains(out, "no golden transcript "+golden) {
		t.Errorf("--golden without a golden:\n%s", out)
	}
	out := runOK(exitOK, "run", "--write-golden", good)
	written, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(out, "\nPASS "+good+"\n"); string(written) != want {
		t.Errorf("golden:\n%s\nwant the transcript printed:\n%s", written, want)
	}
	runOK(exitOK, "run", "--golden", good)
	if err := os.WriteFile(golden, bytes.Replace(written, []byte("200m"), []byte("250m"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out = runOK(exitMismatch, "run", good, "--golden")
	if !strings.Contains(out, "FAIL "+good+": the transcript is not the golden one") || !strings.Contains(out, "transcript differs from "+golden) {
		t.Errorf("--golden with a golden that differs:\n%s", out)
	}
	runOK(exitInvalid, "run", "--golden", "--write-golden", good)
	runOK(exitInvalid, "plan", "--golden", good)
}

// TestRunUnclaimedError: a resize the API server refuses, with no
// expect.error after it, fails the file and names the step, its line and
// the error.
func TestRunUnclaimedError(t *testing.T) {
	typo := writeFile(t, "typo.yaml", strings.Replace(strings.Replace(wrongExpectation, `"name":"app"`, `"name":"ap"`, 1), "cpu: 300m", "cpu: 100m", 1))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", typo}, &stdout, &stderr); code != exitMismatch {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitMismatch, stdout.String(), stderr.String())
	}
	want := filepath.Clean(typo) + ":10: steps[0]: resize failed, and no expect.error after it claims the error:\n  Pod \"web\" is invalid"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
}
