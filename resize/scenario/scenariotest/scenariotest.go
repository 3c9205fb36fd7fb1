// Package scenariotest runs scenario files from a Go test: each file is a
// subtest that fails with every expectation that did not hold, so a
// project that keeps resize stories as YAML next to its code checks them
// with go test.
//
//	func TestResizeStories(t *testing.T) {
//		scenariotest.Run(t, "testdata/*.yaml")
//	}
//
// A file with a golden transcript beside it (the same name ending in
// .golden) must also give that transcript, byte for byte. To write the
// goldens (a new file's, or after a reviewed change of behaviour), run the
// test with the flag -scenariotest.update:
//
//	go test ./... -run TestResizeStories -args -scenariotest.update
//
// Each failure names the file and the line of its step
// ("testdata/web.yaml:14: steps[2]: expect.qosClass ..."), so that it
// points at the YAML rather than at this package.
package scenariotest

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize/scenario"
)

// update is the flag -scenariotest.update: write every file's golden
// transcript from the run instead of comparing with it. Its name carries
// the package's so that it cannot clash with a test binary's own -update.
var update = flag.Bool("scenariotest.update", false, "write each scenario file's golden transcript (FILE.golden) from this run instead of comparing with it")

// Run runs every scenario file the glob patterns match on a simulated
// node, one subtest per file named after it. It fails the test if a
// pattern is malformed or matches nothing. With a nil t it runs nothing:
// there is no test to run the files in or to fail.
func Run(t *testing.T, patterns ...string) {
	if t == nil {
		return
	}
	t.Helper()
	RunWith(t, scenario.Options{}, patterns...)
}

// RunWith is Run on the backends opts names (a real cgroup root, a real
// CRI endpoint). A scenario that does not apply to them
// (scenario.ErrNotApplicable) is skipped with the reason.
func RunWith(t *testing.T, opts scenario.Options, patterns ...string) {
	if t == nil {
		return
	}
	t.Helper()
	var files []string
	for _, pattern := range patterns {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatalf("scenario pattern %q: %v", pattern, err)
		}
		if len(matches) == 0 {
			t.Fatalf("scenario pattern %q matches no file", pattern)
		}
		files = append(files, matches...)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), func(t *testing.T) {
			runFile(t, file, opts)
		})
	}
}

func runFile(t *testing.T, file string, opts scenario.Options) {
	t.Helper()
	skip, problems, err := check(file, opts, *update)
	switch {
	case err != nil:
		t.Fatal(err)
	case skip != "":
		t.Skip(skip)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// check runs one scenario file and returns why it does not apply to the
// backends (skip), or what went wrong: every mismatch, and a transcript
// that differs from the golden beside the file (with write, the golden is
// written instead). err is a file that does not load or run at all, or a
// golden that cannot be read or written.
func check(file string, opts scenario.Options, write bool) (skip string, problems []string, err error) {
	s, err := scenario.Load(file)
	if err != nil {
		return "", nil, err
	}
	// Transcripts name the file, not the directory the test runs in.
	s.File = filepath.Base(file)
	res, err := scenario.Run(context.Background(), s, opts)
	if errors.Is(err, scenario.ErrNotApplicable) {
		return err.Error(), nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	s.File = file
	for _, m := range res.Mismatches {
		problems = append(problems, s.Where(m)+": "+m.String())
	}
	golden := scenario.GoldenFile(file)
	if write {
		return "", problems, scenario.WriteGolden(golden, res.Transcript)
	}
	diff, err := scenario.CompareGolden(golden, res.Transcript)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", problems, nil
	case err != nil:
		return "", nil, err
	}
	if diff != "" {
		problems = append(problems, diff)
	}
	return "", problems, nil
}
