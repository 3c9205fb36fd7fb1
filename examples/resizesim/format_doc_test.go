package main

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// formatDoc specifies the command: its subcommands, flags and exit
// statuses are in its section "Running scenarios".
const formatDoc = "../../resize/scenario/FORMAT.md"

// TestFormatDocDescribesTheCommand holds the command to what FORMAT.md says
// of it: the same subcommands, the same flags, the same exit statuses.
func TestFormatDocDescribesTheCommand(t *testing.T) {
	b, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Running scenarios\n")
	if !ok {
		t.Fatalf("%s has no section \"## Running scenarios\"", formatDoc)
	}
	section, _, _ = strings.Cut(section, "\n## ")

	// What the command says of itself: its usage text.
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != exitInvalid {
		t.Errorf("resizesim -h exits %d, want %d", code, exitInvalid)
	}
	usage := stderr.String()
	find := func(re string, text string) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(text, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	same := func(what string, doc, cmd []string) {
		t.Helper()
		if len(doc) == 0 {
			t.Errorf("%s: found none in %s", what, formatDoc)
		}
		if !slices.Equal(doc, cmd) {
			t.Errorf("%s: %s documents %q, the command has %q", what, formatDoc, doc, cmd)
		}
	}

	same("subcommands", find("\\| `resizesim (\\w+) FILE\\.\\.\\.` \\|", section), find(`resizesim \[flags\] (\w+) FILE`, usage))
	same("flags", find("(?m)^\\| `--([a-z-]+)[ `]", section), find(`(?m)^  -([a-z-]+)`, usage))

	var statuses []string
	for _, code := range []int{exitOK, exitMismatch, exitInvalid} {
		statuses = append(statuses, strconv.Itoa(code))
	}
	slices.Sort(statuses)
	same("exit statuses", find(`(?m)^\| (\d) \|`, section), statuses)
}
