package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exitStep is a scenario that does not apply on a real runtime (only the
// in-memory runtime can end a process with a chosen code).
const exitStep = `
name: exits
pods:
- metadata: {name: web}
  spec: {restartPolicy: Never, containers: [{name: app}]}
steps:
- exit: {pod: web, container: app, exitCode: 0}
`

// runReport is the JSON document of resizesim run -o json, read back.
type runReport struct {
	Status   int      `json:"status"`
	Passed   bool     `json:"passed"`
	Duration *float64 `json:"duration"`
	Files    []struct {
		File       string   `json:"file"`
		Name       string   `json:"name"`
		Result     string   `json:"result"`
		Passed     bool     `json:"passed"`
		Error      string   `json:"error"`
		Skipped    string   `json:"skipped"`
		Duration   *float64 `json:"duration"`
		Mismatches []struct {
			Step int    `json:"step"`
			Line int    `json:"line"`
			Path string `json:"path"`
			Want string `json:"want"`
			Got  string `json:"got"`
		} `json:"mismatches"`
		Golden string `json:"golden"`
	} `json:"files"`
}

// TestRunOutputJSON: run -o json prints one JSON document with a result
// per file, in order, and nothing else; errors still go to stderr, and
// the exit status is run's.
func TestRunOutputJSON(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	wrong := writeFile(t, "wrong.yaml", wrongExpectation)
	bad := writeFile(t, "bad.yaml", badDuration)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"-o json, flag first", []string{"-o", "json", "run", good, wrong, bad}, exitInvalid},
		{"--output json, flag last", []string{"run", good, wrong, bad, "--output", "json"}, exitInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			var rep runReport
			dec := json.NewDecoder(&stdout)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("stdout is not the documented JSON document: %v\n%s", err, stdout.String())
			}
			if dec.More() {
				t.Errorf("stdout holds more than one document")
			}
			if rep.Status != exitInvalid || rep.Passed || rep.Duration == nil || *rep.Duration < 0 || len(rep.Files) != 3 {
				t.Fatalf("report: %+v", rep)
			}
			g, w, b := rep.Files[0], rep.Files[1], rep.Files[2]
			if g.File != good || g.Name != "wrong" || g.Result != "pass" || !g.Passed || len(g.Mismatches) != 0 || g.Duration == nil {
				t.Errorf("the passing file: %+v", g)
			}
			if w.File != wrong || w.Result != "fail" || w.Passed || len(w.Mismatches) != 1 {
				t.Fatalf("the failing file: %+v", w)
			}
			if m := w.Mismatches[0]; m.Step != 1 || m.Line != 11 || m.Path != "expect.containers.app.resources.requests.cpu" || m.Want != "300m" || m.Got != "200m" {
				t.Errorf("the mismatch: %+v", m)
			}
			if b.File != bad || b.Result != "error" || b.Passed || b.Name != "" || !strings.Contains(b.Error, bad+": steps[1]: advance: malformed duration") {
				t.Errorf("the invalid file: %+v", b)
			}
			if !strings.Contains(stderr.String(), "resizesim: "+b.Error) {
				t.Errorf("stderr lacks the invalid file's error: %s", stderr.String())
			}
		})
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "-o", "json", wrong}, &stdout, &stderr); code != exitMismatch {
		t.Errorf("a failing file alone: exit %d, want %d", code, exitMismatch)
	}
	var rep runReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Status != exitMismatch {
		t.Errorf("a failing file alone: %v, %+v", err, rep)
	}
}

// junitReport is the JUnit XML of resizesim run --junit, read back.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name      string `xml:"name,attr"`
		Tests     int    `xml:"tests,attr"`
		Failures  int    `xml:"failures,attr"`
		Errors    int    `xml:"errors,attr"`
		Skipped   int    `xml:"skipped,attr"`
		Time      string `xml:"time,attr"`
		Timestamp string `xml:"timestamp,attr"`
		Cases     []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(xml.Header)) {
		t.Errorf("%s does not start with the XML declaration", path)
	}
	var rep junitReport
	if err := xml.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s is not XML: %v\n%s", path, err, b)
	}
	return rep
}

// TestRunJUnit: run --junit writes one testsuite with a testcase per file:
// a failure with the mismatches and the transcript for a failing file, an
// error for an invalid one, nothing for a passing one; the text output
// and the exit status are run's.
func TestRunJUnit(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	wrong := writeFile(t, "wrong.yaml", wrongExpectation)
	bad := writeFile(t, "bad.yaml", badDuration)
	report := filepath.Join(t.TempDir(), "junit.xml")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--junit", report, good, wrong, bad}, &stdout, &stderr); code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
	}
	if !strings.Contains(stdout.String(), "PASS "+good) || !strings.Contains(stdout.String(), "FAIL "+wrong) {
		t.Errorf("--junit changed the text output:\n%s", stdout.String())
	}
	rep := readJUnit(t, report)
	if rep.Tests != 3 || rep.Failures != 1 || rep.Errors != 1 || rep.Skipped != 0 || len(rep.Suites) != 1 {
		t.Fatalf("testsuites: %+v", rep)
	}
	s := rep.Suites[0]
	if s.Name != "resizesim run" || s.Tests != 3 || s.Failures != 1 || s.Errors != 1 || s.Time == "" || s.Timestamp == "" || len(s.Cases) != 3 {
		t.Fatalf("testsuite: %+v", s)
	}
	for i, file := range []string{good, wrong, bad} {
		if c := s.Cases[i]; c.Name != file || c.Classname != "resizesim" || c.Time == "" {
			t.Errorf("testcase %d: %+v", i, c)
		}
	}
	if c := s.Cases[0]; c.Failure != nil || c.Error != nil || c.Skipped != nil {
		t.Errorf("the passing file: %+v", c)
	}
	c := s.Cases[1]
	if c.Failure == nil || c.Failure.Type != "mismatch" || c.Failure.Message != "1 expectation(s) did not hold" ||
		!strings.Contains(c.Failure.Text, wrong+":11: steps[1]: expect.containers.app.resources.requests.cpu\n  - want: 300m\n  + got:  200m") {
		t.Errorf("the failing file: %+v", c.Failure)
	}
	if !strings.Contains(c.SystemOut, "Scenario: wrong") || !strings.Contains(c.SystemOut, "MISMATCH expect.containers.app.resources.requests.cpu") {
		t.Errorf("the failing file's system-out is not its transcript:\n%s", c.SystemOut)
	}
	if c := s.Cases[2]; c.Error == nil || !strings.Contains(c.Error.Message, bad+": steps[1]: advance: malformed duration") {
		t.Errorf("the invalid file: %+v", c.Error)
	}
}

// TestRunJUnitSkips: a file that does not apply to the backends is a
// skipped testcase with the reason (and exit status 0, as without the
// report); here the backend is a runtime socket that is not there, which
// the applicable file then fails on.
func TestRunJUnitSkips(t *testing.T) {
	exits := writeFile(t, "exits.yaml", exitStep)
	report := filepath.Join(t.TempDir(), "junit.xml")
	var stdout, stderr bytes.Buffer
	args := []string{"--cri-endpoint", "unix:///nonexistent/x.sock", "--image", "busybox", "run", "--junit", report, "-o", "json", exits}
	if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Errorf("exit %d, want 0; stderr %s", code, stderr.String())
	}
	rep := readJUnit(t, report)
	if len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 1 || rep.Skipped != 1 || rep.Suites[0].Skipped != 1 {
		t.Fatalf("report: %+v", rep)
	}
	c := rep.Suites[0].Cases[0]
	if c.Skipped == nil || !strings.Contains(c.Skipped.Message, "steps[0]: exit steps need the in-memory runtime") || c.Failure != nil || c.Error != nil {
		t.Errorf("the file that does not apply: %+v", c)
	}
	var js runReport
	if err := json.Unmarshal(stdout.Bytes(), &js); err != nil || len(js.Files) != 1 || js.Files[0].Result != "skip" || js.Files[0].Passed ||
		js.Files[0].Skipped != c.Skipped.Message || !js.Passed {
		t.Errorf("JSON of the skipped file: %v %+v", err, js)
	}
}

// TestReportFlagsRefused: the report flags are run's only, --output takes
// text or json, and a report that cannot be written is exit status 2.
func TestReportFlagsRefused(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.Replace(wrongExpectation, "cpu: 300m", "cpu: 200m", 1))
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"plan", "are for the run command", []string{"plan", "-o", "json", good}},
		{"explore", "are for the run command", []string{"explore", "--junit", "x.xml", good}},
		{"the walkthrough", "are for the run command", []string{"-o", "json"}},
		{"yaml", `--output "yaml": want text or json`, []string{"run", "-o", "yaml", good}},
		{"unwritable report", "resizesim: --junit: ", []string{"run", "--junit", filepath.Join(t.TempDir(), "no", "dir", "r.xml"), good}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}
