package scenario

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

func (p *parser) expect(raw json.RawMessage) (*Expect, error) {
	const f = "expect"
	m, err := p.object(raw, f)
	if err != nil {
		return nil, err
	}
	if err := p.keys(m, f, "error", "pod", "admitted", "qosClass", "generation", "conditions",
		"containers", "cgroups", "events", "noEvents", "node", "audit", "metrics"); err != nil {
		return nil, err
	}
	e := &Expect{}
	if raw, ok := m["error"]; ok {
		v, err := p.str(raw, f+".error")
		if err != nil {
			return nil, err
		}
		e.Error = &v
	}
	var ref PodRef
	if raw, ok := m["pod"]; ok {
		if ref, err = p.podRef(raw, f+".pod", false); err != nil {
			return nil, err
		}
		e.Pod = &ref
	}
	for _, k := range []string{"admitted", "qosClass", "generation", "conditions", "containers", "cgroups", "events", "noEvents"} {
		if _, ok := m[k]; ok && e.Pod == nil {
			return nil, p.errf(f+"."+k, "needs expect.pod: the pod it refers to")
		}
	}
	if raw, ok := m["admitted"]; ok {
		b, err := p.boolean(raw, f+".admitted")
		if err != nil {
			return nil, err
		}
		e.Admitted = &b
	}
	if raw, ok := m["qosClass"]; ok {
		v, err := p.oneOf(raw, f+".qosClass", "Guaranteed", "Burstable", "BestEffort")
		if err != nil {
			return nil, err
		}
		q := v1.PodQOSClass(v)
		e.QOSClass = &q
	}
	if raw, ok := m["generation"]; ok {
		n, err := p.integer(raw, f+".generation", 1, 1<<62)
		if err != nil {
			return nil, err
		}
		e.Generation = &n
	}
	if raw, ok := m["conditions"]; ok {
		e.HasConditions = true
		if e.Conditions, err = p.conditions(raw, f+".conditions"); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["containers"]; ok {
		cm, err := p.object(raw, f+".containers")
		if err != nil {
			return nil, err
		}
		e.Containers = map[string]ContainerExpect{}
		for _, name := range slices.Sorted(maps.Keys(cm)) {
			cf := f + ".containers." + name
			if !p.ever[ref][name] {
				return nil, p.errf(cf, "pod %s has no container %q", ref, name)
			}
			ce, err := p.containerExpect(cm[name], cf)
			if err != nil {
				return nil, err
			}
			e.Containers[name] = ce
			e.ContainerOrder = append(e.ContainerOrder, name)
		}
	}
	if raw, ok := m["cgroups"]; ok {
		if e.Cgroups, err = p.cgroups(raw, f+".cgroups", ref); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["events"]; ok {
		if e.Events, err = p.events(raw, f+".events"); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["noEvents"]; ok {
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, p.errf(f+".noEvents", "want a list of event reasons")
		}
		for i, r := range list {
			if r == "" {
				return nil, p.errf(fmt.Sprintf("%s.noEvents[%d]", f, i), "must not be empty")
			}
		}
		e.NoEvents = list
	}
	if raw, ok := m["node"]; ok {
		nm, err := p.object(raw, f+".node")
		if err != nil {
			return nil, err
		}
		if err := p.keys(nm, f+".node", "allocated"); err != nil {
			return nil, err
		}
		if raw, ok := nm["allocated"]; ok {
			if e.NodeAllocated, err = p.resourceList(raw, f+".node.allocated"); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := m["audit"]; ok {
		e.HasAudit = true
		if e.Audit, err = p.audit(raw, f+".audit", e.Pod); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["metrics"]; ok {
		e.HasMetrics = true
		if e.Metrics, err = p.metricsExpect(raw, f+".metrics"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

var conditionTypes = []string{"PodResizePending", "PodResizeInProgress"}

func (p *parser) conditions(raw json.RawMessage, field string) ([]ConditionExpect, error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, p.errf(field, "want a list of conditions ([] for none), got %s", describe(raw))
	}
	var out []ConditionExpect
	seen := map[string]bool{}
	for i, item := range list {
		cf := fmt.Sprintf("%s[%d]", field, i)
		m, err := p.object(item, cf)
		if err != nil {
			return nil, err
		}
		if err := p.keys(m, cf, "type", "status", "reason", "message", "messageRegexp", "observedGeneration"); err != nil {
			return nil, err
		}
		tRaw, ok := m["type"]
		if !ok {
			return nil, p.errf(cf+".type", "required")
		}
		t, err := p.oneOf(tRaw, cf+".type", conditionTypes...)
		if err != nil {
			return nil, err
		}
		if seen[t] {
			return nil, p.errf(cf+".type", "condition %s listed twice", t)
		}
		seen[t] = true
		c := ConditionExpect{Type: v1.PodConditionType(t)}
		if raw, ok := m["status"]; ok {
			v, err := p.oneOf(raw, cf+".status", "True", "False", "Unknown")
			if err != nil {
				return nil, err
			}
			c.Status = &v
		}
		if raw, ok := m["reason"]; ok {
			v, err := p.str(raw, cf+".reason")
			if err != nil {
				return nil, err
			}
			c.Reason = &v
		}
		if c.Message, c.MessageRegexp, err = p.message(m, cf); err != nil {
			return nil, err
		}
		if raw, ok := m["observedGeneration"]; ok {
			n, err := p.integer(raw, cf+".observedGeneration", 0, 1<<62)
			if err != nil {
				return nil, err
			}
			c.ObservedGeneration = &n
		}
		out = append(out, c)
	}
	return out, nil
}

// message reads message or messageRegexp (not both).
func (p *parser) message(m map[string]json.RawMessage, field string) (*string, *regexp.Regexp, error) {
	msgRaw, hasMsg := m["message"]
	reRaw, hasRe := m["messageRegexp"]
	if hasMsg && hasRe {
		return nil, nil, p.errf(field+".messageRegexp", "give message or messageRegexp, not both")
	}
	if hasMsg {
		v, err := p.str(msgRaw, field+".message")
		if err != nil {
			return nil, nil, err
		}
		return &v, nil, nil
	}
	if hasRe {
		v, err := p.str(reRaw, field+".messageRegexp")
		if err != nil {
			return nil, nil, err
		}
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, nil, p.errf(field+".messageRegexp", "malformed regular expression: %v", err)
		}
		return nil, re, nil
	}
	return nil, nil, nil
}

func (p *parser) containerExpect(raw json.RawMessage, field string) (ContainerExpect, error) {
	var ce ContainerExpect
	m, err := p.object(raw, field)
	if err != nil {
		return ce, err
	}
	if err := p.keys(m, field, "restartCount", "resources", "allocated", "spec"); err != nil {
		return ce, err
	}
	if raw, ok := m["restartCount"]; ok {
		n, err := p.integer(raw, field+".restartCount", 0, 1<<31-1)
		if err != nil {
			return ce, err
		}
		c := int32(n)
		ce.RestartCount = &c
	}
	for _, k := range []string{"resources", "allocated", "spec"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		re, err := p.resources(raw, field+"."+k)
		if err != nil {
			return ce, err
		}
		switch k {
		case "resources":
			ce.Resources = re
		case "allocated":
			ce.Allocated = re
		case "spec":
			ce.Spec = re
		}
	}
	return ce, nil
}

func (p *parser) resources(raw json.RawMessage, field string) (*ResourcesExpect, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	if err := p.keys(m, field, "requests", "limits"); err != nil {
		return nil, err
	}
	re := &ResourcesExpect{}
	if raw, ok := m["requests"]; ok {
		l, err := p.resourceList(raw, field+".requests")
		if err != nil {
			return nil, err
		}
		re.Requests = &l
	}
	if raw, ok := m["limits"]; ok {
		l, err := p.resourceList(raw, field+".limits")
		if err != nil {
			return nil, err
		}
		re.Limits = &l
	}
	return re, nil
}

// cgroupFile is a cgroup interface file name: controller.name.
var cgroupFile = regexp.MustCompile(`^[a-z_]+\.[a-z0-9_.]+$`)

func (p *parser) cgroupFiles(raw json.RawMessage, field string) (map[string]string, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !cgroupFile.MatchString(k) {
			return nil, p.errf(field+"."+k, "not a cgroup file name")
		}
		var n json.Number
		if err := json.Unmarshal(m[k], &n); err == nil {
			out[k] = n.String()
			continue
		}
		v, err := p.str(m[k], field+"."+k)
		if err != nil {
			return nil, err
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}

func (p *parser) cgroups(raw json.RawMessage, field string, ref PodRef) (*CgroupsExpect, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	if err := p.keys(m, field, "pod", "containers"); err != nil {
		return nil, err
	}
	ce := &CgroupsExpect{}
	if raw, ok := m["pod"]; ok {
		if ce.Pod, err = p.cgroupFiles(raw, field+".pod"); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["containers"]; ok {
		cm, err := p.object(raw, field+".containers")
		if err != nil {
			return nil, err
		}
		ce.Containers = map[string]map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(cm)) {
			cf := field + ".containers." + name
			if !p.ever[ref][name] {
				return nil, p.errf(cf, "pod %s has no container %q", ref, name)
			}
			files, err := p.cgroupFiles(cm[name], cf)
			if err != nil {
				return nil, err
			}
			ce.Containers[name] = files
			ce.ContainerOrder = append(ce.ContainerOrder, name)
		}
	}
	return ce, nil
}

func (p *parser) events(raw json.RawMessage, field string) ([]EventExpect, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, p.errf(field, "want a list of events, got %s", describe(raw))
	}
	var out []EventExpect
	for i, item := range list {
		ef := fmt.Sprintf("%s[%d]", field, i)
		m, err := p.object(item, ef)
		if err != nil {
			return nil, err
		}
		if err := p.keys(m, ef, "type", "reason", "message", "messageRegexp"); err != nil {
			return nil, err
		}
		var e EventExpect
		if raw, ok := m["type"]; ok {
			if e.Type, err = p.oneOf(raw, ef+".type", "Normal", "Warning"); err != nil {
				return nil, err
			}
		}
		if e.Reason, err = p.optString(m, "reason", ef); err != nil {
			return nil, err
		}
		if e.Message, e.MessageRegexp, err = p.message(m, ef); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
