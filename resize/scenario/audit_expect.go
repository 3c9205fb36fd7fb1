package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/resizelet/resizelet/resize"
)

// AuditExpect is one difference an expect step's audit key says
// Node.Audit finds. Empty fields are not checked.
type AuditExpect struct {
	Container string
	Where     resize.Where
	Field     string
	Want      string
	Got       string
}

// String renders the expectation as it would be written.
func (a AuditExpect) String() string {
	var parts []string
	for _, kv := range [][2]string{{"container", a.Container}, {"where", string(a.Where)}, {"field", a.Field}, {"want", a.Want}, {"got", a.Got}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s: %q", kv[0], kv[1]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (a AuditExpect) matches(d resize.Difference) bool {
	return (a.Container == "" || a.Container == d.Container) && (a.Where == "" || a.Where == d.Where) &&
		(a.Field == "" || a.Field == d.Field) && (a.Want == "" || a.Want == d.Want) && (a.Got == "" || a.Got == d.Got)
}

// audit parses expect.audit: a list of differences, each with where,
// container, field, want and got, all optional (where one of
// resize.Wheres; container only with expect.pod).
func (p *parser) audit(raw json.RawMessage, field string, pod *PodRef) ([]AuditExpect, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, p.errf(field, "want a list of differences ([] for none), got %s", describe(raw))
	}
	wheres := make([]string, len(resize.Wheres))
	for i, w := range resize.Wheres {
		wheres[i] = string(w)
	}
	out := make([]AuditExpect, 0, len(list))
	for i, item := range list {
		af := fmt.Sprintf("%s[%d]", field, i)
		m, err := p.object(item, af)
		if err != nil {
			return nil, err
		}
		if err := p.keys(m, af, "where", "container", "field", "want", "got"); err != nil {
			return nil, err
		}
		var a AuditExpect
		if raw, ok := m["where"]; ok {
			w, err := p.oneOf(raw, af+".where", wheres...)
			if err != nil {
				return nil, err
			}
			a.Where = resize.Where(w)
		}
		if a.Container, err = p.optString(m, "container", af); err != nil {
			return nil, err
		}
		if a.Container != "" {
			if pod == nil {
				return nil, p.errf(af+".container", "needs expect.pod: the pod it refers to")
			}
			if !p.ever[*pod][a.Container] {
				return nil, p.errf(af+".container", "pod %s has no container %q", *pod, a.Container)
			}
		}
		for _, k := range []struct {
			key string
			to  *string
		}{{"field", &a.Field}, {"want", &a.Want}, {"got", &a.Got}} {
			raw, ok := m[k.key]
			if !ok {
				continue
			}
			var n json.Number
			if err := json.Unmarshal(raw, &n); err == nil {
				*k.to = n.String()
				continue
			}
			if *k.to, err = p.str(raw, af+"."+k.key); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// checkAudit runs Node.Audit and matches its differences (the pod's, or
// the node's without expect.pod) with the expected ones: each expected
// entry takes the first difference it matches that no entry before it
// took, and every difference must be taken.
func (r *runner) checkAudit(e *Expect) int {
	checks := 1
	diffs, err := r.currentNode().Audit(context.Background())
	if err != nil {
		r.mismatch("audit", "an audit", "the audit failed: "+err.Error())
		return checks
	}
	var mine []resize.Difference
	for _, d := range diffs {
		if e.Pod == nil || (d.Namespace == e.Pod.Namespace && d.Pod == e.Pod.Name) {
			mine = append(mine, d)
		}
	}
	taken := make([]bool, len(mine))
	for i, a := range e.Audit {
		checks++
		found := false
		for j, d := range mine {
			if !taken[j] && a.matches(d) {
				taken[j], found = true, true
				break
			}
		}
		if !found {
			r.mismatch(fmt.Sprintf("audit[%d]", i), a.String(), "no such difference (the audit found: "+formatDifferences(mine)+")")
		}
	}
	for j, d := range mine {
		if !taken[j] {
			r.mismatch("audit", "no other difference", d.String())
		}
	}
	for _, d := range mine {
		r.t.line("audit: %s", d)
	}
	return checks
}

func formatDifferences(ds []resize.Difference) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}
