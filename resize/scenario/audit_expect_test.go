package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/scenario"
)

// TestParseAudit: expect.audit is a list of differences with optional
// where, container, field, want and got; node.reconcilePodCgroups and
// node.flushCheckpoints are booleans.
func TestParseAudit(t *testing.T) {
	s, err := scenario.Parse("ok.yaml", []byte("name: x\nnode: {reconcilePodCgroups: true, flushCheckpoints: true}"+validPods+`steps:
- expect: {audit: []}
- expect:
    pod: web
    audit:
    - {where: podCgroup, field: cpu.max, want: 50000 100000, got: "150000 100000"}
    - {container: app, where: status, field: limits.cpu}
    - {where: runtime, want: 512}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Node.ReconcilePodCgroups || !s.Node.FlushCheckpoints {
		t.Errorf("node options not read: %+v", s.Node)
	}
	if e := s.Steps[0].Expect; !e.HasAudit || len(e.Audit) != 0 {
		t.Errorf("audit: [] read as %+v", e)
	}
	want := []scenario.AuditExpect{
		{Where: resize.WherePodCgroup, Field: "cpu.max", Want: "50000 100000", Got: "150000 100000"},
		{Container: "app", Where: resize.WhereStatus, Field: "limits.cpu"},
		{Where: resize.WhereRuntime, Want: "512"},
	}
	got := s.Steps[1].Expect.Audit
	if len(got) != len(want) {
		t.Fatalf("audit %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	for _, tt := range []struct{ name, yaml, field, msg string }{
		{"not a list", "steps: [{expect: {audit: {where: podCgroup}}}]\n", "expect.audit", "want a list"},
		{"unknown part", "steps: [{expect: {audit: [{where: kernel}]}}]\n", "expect.audit[0].where", "not one of"},
		{"unknown key", "steps: [{expect: {audit: [{file: cpu.max}]}}]\n", "expect.audit[0].file", "unknown key"},
		{"container without pod", "steps: [{expect: {audit: [{container: app}]}}]\n", "expect.audit[0].container", "needs expect.pod"},
		{"unknown container", "steps: [{expect: {pod: web, audit: [{container: db}]}}]\n", "expect.audit[0].container", "no container"},
		{"node option not a boolean", "node: {reconcilePodCgroups: yes please}\nsteps: [{advance: 1s}]\n", "node.reconcilePodCgroups", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte("name: x"+validPods+tt.yaml))
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v, want a *scenario.Error", err)
			}
			if se.Field != tt.field || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("error at %q: %q, want %q containing %q", se.Field, se.Msg, tt.field, tt.msg)
			}
		})
	}
}

// TestAuditExpectMismatches: an expected difference the audit does not
// find, and a difference no entry expects, are both mismatches.
func TestAuditExpectMismatches(t *testing.T) {
	s, err := scenario.Parse("audit.yaml", []byte("name: x"+validPods+`steps:
- expect:
    pod: web
    audit: [{where: podCgroup, field: cpu.weight}]
- fault: {call: CgroupWrite, pod: web}
- resize: {pod: web, patch: '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"50m"}}}]}}'}
- expect: {audit: []}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scenario.Run(context.Background(), s, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Mismatches {
		got = append(got, m.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"steps[0]: expect.audit[0]\n  - want: {where: \"podCgroup\", field: \"cpu.weight\"}\n  + got:  no such difference (the audit found: none)",
		"steps[3]: expect.audit\n  - want: no other difference\n  + got:  default/web: podCgroup cpu.weight: want 2, got 4",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("mismatches lack %q:\n%s", want, text)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d mismatches, want 2:\n%s", len(got), text)
	}
}
