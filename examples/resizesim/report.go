package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/resizelet/resizelet/resize/metrics"
	"github.com/resizelet/resizelet/resize/scenario"
)

// Outcomes of one scenario file in a run.
const (
	outcomePass  = "pass"  // every expectation held
	outcomeFail  = "fail"  // an expectation did not hold
	outcomeSkip  = "skip"  // the file does not apply to the backends (scenario.ErrNotApplicable)
	outcomeError = "error" // the file is not a valid scenario, or the run could not be done
)

// fileResult is what one scenario file gave: all that the text, JSON and
// JUnit reports say of it.
type fileResult struct {
	file    string
	name    string // the scenario's name, when it loaded
	outcome string
	code    int // the file's exit status
	// err is the file's error (outcomeError) or the reason it does not
	// apply (outcomeSkip); errText is its message as resizesim prints it
	// after "resizesim: ".
	err     error
	errText string
	res     *scenario.Result // the run's result, when it ran
	// scn is the scenario, when it loaded: its steps' lines place the
	// mismatches.
	scn *scenario.Scenario
	// golden is how the transcript differs from the golden file (with
	// --golden), or why there is none to compare with; "" when it is the
	// same or not compared.
	golden string
	// metrics are the kubelet's resize metrics after the run in the
	// Prometheus text format, when asked for (withMetrics, --metrics).
	withMetrics bool
	metrics     string
	duration    time.Duration
}

// goldenMode is what run does with golden transcripts (--golden,
// --write-golden).
type goldenMode int

const (
	goldenIgnore  goldenMode = iota
	goldenCompare            // a transcript that differs from FILE.golden, or no golden, fails the file
	goldenWrite              // the transcript is written to FILE.golden
)

// runFile loads and runs one scenario file, and compares or writes its
// golden transcript as golden says.
func runFile(ctx context.Context, file string, opts scenario.Options, withMetrics bool, golden goldenMode) fileResult {
	start := time.Now()
	s, err := scenario.Load(file)
	if err != nil {
		return fileResult{file: file, outcome: outcomeError, code: exitInvalid, err: err, errText: err.Error(), duration: time.Since(start)}
	}
	r := runScenario(ctx, s, opts, withMetrics)
	r.duration = time.Since(start)
	if r.res == nil || opts.Plans || golden == goldenIgnore {
		return r
	}
	path := scenario.GoldenFile(file)
	if golden == goldenWrite {
		if err := scenario.WriteGolden(path, r.res.Transcript); err != nil {
			r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, err, err.Error()
		}
		return r
	}
	diff, err := scenario.CompareGolden(path, r.res.Transcript)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.golden = fmt.Sprintf("no golden transcript %s to compare with (--write-golden writes it)", path)
	case err != nil:
		r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, err, fmt.Sprintf("%s: golden: %v", file, err)
		return r
	default:
		r.golden = diff
	}
	if r.golden != "" {
		r.outcome, r.code = outcomeFail, exitMismatch
	}
	return r
}

// problems are what failed a file, a line each as resizesim prints them:
// each mismatch at the file and line of its step, then the golden's
// difference.
func (r fileResult) problems() []string {
	var out []string
	for _, m := range r.res.Mismatches {
		out = append(out, fmt.Sprintf("%s: %s", r.scn.Where(m), m))
	}
	if r.golden != "" {
		out = append(out, fmt.Sprintf("%s: %s", r.file, r.golden))
	}
	return out
}

// runScenario runs a loaded scenario and classifies the result; it prints
// nothing. withMetrics records the kubelet's resize metrics on a registry
// of the file's own and keeps them in the result.
func runScenario(ctx context.Context, s *scenario.Scenario, opts scenario.Options, withMetrics bool) fileResult {
	r := fileResult{file: s.File, name: s.Name, scn: s}
	if withMetrics {
		m, err := metrics.New(prometheus.NewRegistry())
		if err != nil {
			r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, err, fmt.Sprintf("%s: %v", s.File, err)
			return r
		}
		opts.Metrics = m
	}
	res, err := scenario.Run(ctx, s, opts)
	if err == nil && withMetrics {
		var text strings.Builder
		if werr := opts.Metrics.WriteText(&text); werr != nil {
			r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, werr, fmt.Sprintf("%s: metrics: %v", s.File, werr)
			return r
		}
		r.withMetrics, r.metrics = true, text.String()
	}
	var se *scenario.Error
	switch {
	case errors.As(err, &se):
		r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, err, err.Error()
	case errors.Is(err, scenario.ErrNotApplicable):
		r.outcome, r.code, r.err, r.errText = outcomeSkip, exitOK, err, err.Error()
	case err != nil:
		r.outcome, r.code, r.err, r.errText = outcomeError, exitInvalid, err, fmt.Sprintf("%s: %v", s.File, err)
	case len(res.Mismatches) > 0 && !opts.Plans:
		r.outcome, r.code, r.res = outcomeFail, exitMismatch, res
	default:
		r.outcome, r.code, r.res = outcomePass, exitOK, res
	}
	return r
}

// writeText prints a file's result as resizesim run always has: the
// transcript and PASS or FAIL with the mismatches on stdout (or the plans,
// for plan), SKIP on stdout, errors on stderr.
func writeText(stdout, stderr io.Writer, r fileResult, plans bool) {
	switch r.outcome {
	case outcomeError:
		fmt.Fprintf(stderr, "resizesim: %s\n", r.errText)
		return
	case outcomeSkip:
		fmt.Fprintf(stdout, "SKIP %s: %s\n", r.file, r.errText)
		return
	}
	if plans {
		printPlans(stdout, r.name, r.file, r.res.Plans)
		return
	}
	stdout.Write(r.res.Transcript)
	if r.withMetrics {
		fmt.Fprintf(stdout, "\n== metrics (Prometheus text format)\n%s", r.metrics)
	}
	if r.outcome == outcomePass {
		fmt.Fprintf(stdout, "\nPASS %s\n", r.file)
		return
	}
	fmt.Fprintf(stdout, "\nFAIL %s: %s\n", r.file, r.failure())
	for _, line := range r.problems() {
		fmt.Fprintln(stdout, line)
	}
}

// jsonRun is the document resizesim run -o json prints: the run's exit
// status and a result per file, in the order given (FORMAT.md, "Running
// scenarios", documents it).
type jsonRun struct {
	Status   int        `json:"status"`
	Passed   bool       `json:"passed"`
	Duration float64    `json:"duration"`
	Files    []jsonFile `json:"files"`
}

type jsonFile struct {
	File       string         `json:"file"`
	Name       string         `json:"name,omitempty"`
	Result     string         `json:"result"`
	Passed     bool           `json:"passed"`
	Mismatches []jsonMismatch `json:"mismatches"`
	Error      string         `json:"error,omitempty"`
	Skipped    string         `json:"skipped,omitempty"`
	Metrics    string         `json:"metrics,omitempty"`
	Golden     string         `json:"golden,omitempty"`
	Duration   float64        `json:"duration"`
}

type jsonMismatch struct {
	Step int    `json:"step"`
	Line int    `json:"line,omitempty"`
	Path string `json:"path"`
	Want string `json:"want"`
	Got  string `json:"got"`
}

// failure says in a few words why a file failed: how many expectations
// did not hold, and whether its transcript differs from the golden.
func (r fileResult) failure() string {
	var parts []string
	if n := len(r.res.Mismatches); n > 0 {
		parts = append(parts, fmt.Sprintf("%d expectation(s) did not hold", n))
	}
	if r.golden != "" {
		parts = append(parts, "the transcript is not the golden one")
	}
	return strings.Join(parts, "; ")
}

// writeJSON prints the run as one JSON document.
func writeJSON(w io.Writer, results []fileResult, status int, elapsed time.Duration) error {
	doc := jsonRun{Status: status, Passed: status == exitOK, Duration: elapsed.Seconds(), Files: []jsonFile{}}
	for _, r := range results {
		f := jsonFile{File: r.file, Name: r.name, Result: r.outcome, Passed: r.outcome == outcomePass,
			Mismatches: []jsonMismatch{}, Metrics: r.metrics, Duration: r.duration.Seconds()}
		switch r.outcome {
		case outcomeError:
			f.Error = r.errText
		case outcomeSkip:
			f.Skipped = r.errText
		case outcomeFail:
			for _, m := range r.res.Mismatches {
				path := "expect." + m.Path
				if m.Action != "" {
					// An action's error that no expect.error claimed.
					path = string(m.Action)
				}
				f.Mismatches = append(f.Mismatches, jsonMismatch{Step: m.Step, Line: r.scn.Steps[m.Step].Line, Path: path, Want: m.Want, Got: m.Got})
			}
			f.Golden = r.golden
		}
		doc.Files = append(doc.Files, f)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// JUnit XML as GitLab, Jenkins and most CI systems read it: testsuites,
// one testsuite, a testcase per file with failure, error or skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitProblem is a failure or an error; its text is CDATA, so that the
// mismatches read as they print.
type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText is an element of text as CDATA.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// xmlText makes s fit for CDATA: invalid UTF-8 and the characters XML 1.0
// does not allow (control characters but tab, newline and carriage
// return; U+FFFE and U+FFFF) become U+FFFD. encoding/xml escapes
// attributes and character data itself, but writes CDATA as given.
func xmlText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// seconds renders a duration as JUnit's time attribute: seconds with
// millisecond precision.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// writeJUnit writes the run as a JUnit XML report to path: a failed file's
// failure holds its mismatches as resizesim prints them and its
// system-out its transcript; an invalid file is an error, a file that
// does not apply skipped.
func writeJUnit(path string, results []fileResult, started time.Time, elapsed time.Duration) error {
	suite := junitSuite{Name: "resizesim run", Tests: len(results), Time: seconds(elapsed), Timestamp: started.UTC().Format("2006-01-02T15:04:05")}
	for _, r := range results {
		c := junitCase{Name: r.file, Classname: "resizesim", File: r.file, Time: seconds(r.duration)}
		switch r.outcome {
		case outcomeFail:
			suite.Failures++
			var text strings.Builder
			for _, line := range r.problems() {
				fmt.Fprintln(&text, line)
			}
			c.Failure = &junitProblem{Message: r.failure(), Type: "mismatch", Text: xmlText(text.String())}
			c.SystemOut = &junitText{Text: xmlText(string(r.res.Transcript))}
		case outcomeError:
			suite.Errors++
			c.Error = &junitProblem{Message: r.errText, Type: "invalid", Text: xmlText(r.errText)}
		case outcomeSkip:
			suite.Skipped++
			c.Skipped = &junitSkipped{Message: r.errText}
		}
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{Name: "resizesim", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	out = append([]byte(xml.Header), out...)
	return os.WriteFile(path, append(out, '\n'), 0o644)
}
