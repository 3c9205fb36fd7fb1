package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	goyaml "go.yaml.in/yaml/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/resize"
	"github.com/resizelet/resizelet/resize/apiserver"
	"github.com/resizelet/resizelet/resize/core"
)

// Error is an invalid scenario: it names the file, the step (its index in
// steps, or -1 for the parts of the file before the steps) and the field.
type Error struct {
	File  string
	Step  int    // index in steps; -1 when the error is not in a step
	Field string // the key path, e.g. "resize.patch" in a step, "node.capacity.cpu" outside
	Msg   string
}

// Error reads "FILE: steps[3]: resize.patch: MSG", or "FILE: FIELD: MSG"
// outside the steps.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(e.File)
	if e.Step >= 0 {
		fmt.Fprintf(&b, ": steps[%d]", e.Step)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

var (
	// DefaultImage is the image given to containers whose manifest names
	// none, so that a scenario may leave images out.
	DefaultImage = "registry.k8s.io/pause:3.10"
)

// MaxFileSize is the largest scenario file Load reads: a thousand times
// the largest scenario in the repository, and a bound on what a wrong
// argument (/dev/zero, a huge log) can make it read.
const MaxFileSize = 1 << 20

// Load reads and parses the scenario file at path. It refuses, with an
// *Error, a file larger than MaxFileSize (reading no more than one byte
// past it) and a path that is not a regular file or a pipe: a directory,
// a device such as /dev/zero, a socket. Pipes are read, up to the same
// size, so that a shell's process substitution works.
func Load(path string) (*Scenario, error) {
	data, err := readScenarioFile(path)
	if err != nil {
		return nil, &Error{File: path, Step: -1, Msg: err.Error()}
	}
	return Parse(path, data)
}

// readScenarioFile reads at most MaxFileSize bytes of a regular file or a
// pipe.
func readScenarioFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if mode := fi.Mode(); !mode.IsRegular() && mode.Type() != fs.ModeNamedPipe {
		return nil, fmt.Errorf("not a regular file (%s): a scenario is a YAML file", describeMode(mode))
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("the file has %d bytes, more than the %d a scenario may have", fi.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the file has more than the %d bytes a scenario may have", MaxFileSize)
	}
	return data, nil
}

// describeMode names the kind of a file that is not a regular one.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.Type().String()
}

// parser carries the file name and the pods known at the current step, so
// that steps can be checked against the pods that exist when they run.
type parser struct {
	file string
	step int
	// live are the pods on the node at the current step, by namespace/name.
	live map[PodRef]*v1.Pod
	// ever are all pods the file has named so far (for expect, which may
	// check a deleted or rejected pod), with every container name each
	// manifest gave them.
	ever map[PodRef]map[string]bool
}

func (p *parser) errf(field, format string, args ...any) *Error {
	return &Error{File: p.file, Step: p.step, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses and validates a scenario; name is used in errors. Unknown
// keys, a step with other than one action key, malformed quantities,
// durations and patches, and pods or containers the scenario does not have
// are errors of type *Error.
func Parse(name string, data []byte) (*Scenario, error) {
	p := &parser{file: name, step: -1, live: map[PodRef]*v1.Pod{}, ever: map[PodRef]map[string]bool{}}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, p.errf("", "not valid YAML: %v", err)
	}
	if err := oneDocument(data); err != nil {
		return nil, p.errf("", "%v", err)
	}
	if field, err := hugeExponent(js, ""); err != nil {
		// A value in a step is reported at its step.
		step := -1
		if rest, ok := strings.CutPrefix(field, "steps["); ok {
			if i := strings.IndexByte(rest, ']'); i > 0 {
				if n, aerr := strconv.Atoi(rest[:i]); aerr == nil {
					step, field = n, strings.TrimPrefix(rest[i+1:], ".")
				}
			}
		}
		return nil, &Error{File: name, Step: step, Field: field, Msg: err.Error()}
	}
	top, err := p.object(js, "")
	if err != nil {
		return nil, err
	}
	if err := p.keys(top, "", "name", "description", "kubelet", "node", "pods", "steps"); err != nil {
		return nil, err
	}
	s := &Scenario{File: name}
	if s.Name, err = p.requiredString(top, "name", ""); err != nil {
		return nil, err
	}
	if err := p.noControl(s.Name, "name", ""); err != nil {
		return nil, err
	}
	if s.Description, err = p.optString(top, "description", ""); err != nil {
		return nil, err
	}
	if err := p.noControl(s.Description, "description", "\n\t"); err != nil {
		return nil, err
	}
	if err := p.node(top["node"], s); err != nil {
		return nil, err
	}
	if raw, ok := top["kubelet"]; ok {
		v, err := p.versionString(raw, "kubelet")
		if err != nil {
			return nil, err
		}
		s.Node.Profile = resize.Profile(v)
	}
	// The node is defaulted and checked by the code that defaults and
	// checks every NodeConfig; its errors name the NodeConfig field, which
	// is the file's node key (the profile is the top-level kubelet key).
	s.Node = s.Node.WithDefaults()
	if err := s.Node.Validate(); err != nil {
		var ce *core.ConfigError
		if !errors.As(err, &ce) {
			return nil, p.errf("node", "%v", err)
		}
		field := "node." + ce.Field
		if ce.Field == "profile" {
			field = "kubelet"
		}
		return nil, p.errf(field, "%s", ce.Msg)
	}
	if raw, ok := top["pods"]; ok && !isNull(raw) {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, p.errf("pods", "want a list of pod manifests")
		}
		for i, item := range list {
			pod, err := p.manifest(item, fmt.Sprintf("pods[%d]", i))
			if err != nil {
				return nil, err
			}
			s.Pods = append(s.Pods, pod)
		}
	}
	raw, ok := top["steps"]
	if !ok || isNull(raw) {
		return nil, p.errf("steps", "required: at least one step")
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, p.errf("steps", "want a list of steps")
	}
	if len(steps) == 0 {
		return nil, p.errf("steps", "required: at least one step")
	}
	allocatable := s.Node.Allocatable
	lines := stepLines(data)
	for i, item := range steps {
		p.step = i
		st, err := p.parseStep(item)
		if err != nil {
			return nil, err
		}
		if len(lines) == len(steps) {
			st.Line = lines[i]
		}
		if st.Allocatable != nil {
			if allocatable, err = p.restartAllocatable(s.Node, allocatable, st.Allocatable); err != nil {
				return nil, err
			}
		}
		s.Steps = append(s.Steps, st)
	}
	return s, nil
}

// restartAllocatable checks a restartKubelet step's allocatable: the
// allocatable in force (cur) with the step's amounts in place of its own
// must be one the node could have, as NodeConfig.Validate says (not
// negative, not above the capacity). It returns that allocatable, which
// later restarts start from.
func (p *parser) restartAllocatable(node resize.NodeConfig, cur, step v1.ResourceList) (v1.ResourceList, error) {
	next := cur.DeepCopy()
	maps.Copy(next, step)
	node.Allocatable = next
	if err := node.Validate(); err != nil {
		var ce *core.ConfigError
		if errors.As(err, &ce) && strings.HasPrefix(ce.Field, "allocatable.") {
			return nil, p.errf("restartKubelet."+ce.Field, "%s", ce.Msg)
		}
		return nil, p.errf("restartKubelet.allocatable", "%v", err)
	}
	return next, nil
}

// oneDocument refuses a YAML stream with more than one document that has
// content: YAMLToJSONStrict reads the first document only, and a second
// one (after "---") would be ignored without a word. Documents that hold
// nothing (a trailing "---", comments) are allowed.
func oneDocument(data []byte) error {
	dec := goyaml.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not valid YAML: document %d: %v", i+1, err)
		}
		if i > 0 && doc != nil {
			return fmt.Errorf("a second YAML document (after a \"---\" line) is not allowed: a scenario file holds one scenario")
		}
	}
}

// hugeExponent walks a JSON document and refuses a number, or a string
// that reads as a number, whose exponent is beyond
// ±apiserver.MaxExponent, before anything decodes it as a quantity. It
// returns the key path of the value (below field) with the error.
func hugeExponent(js []byte, field string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return field, nil // not JSON: the decoding that follows says so
	}
	return findHugeExponent(doc, field)
}

// findHugeExponent walks a decoded JSON value (maps, lists, strings and
// json.Numbers) and returns the key path (below path, "a.b[0].c") and the
// error of the first string or number apiserver.CheckExponent refuses.
func findHugeExponent(v any, path string) (string, error) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if where, err := findHugeExponent(v[k], p); err != nil {
				return where, err
			}
		}
	case []any:
		for i, e := range v {
			if where, err := findHugeExponent(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return where, err
			}
		}
	case json.Number:
		return path, apiserver.CheckExponent(string(v))
	case string:
		return path, apiserver.CheckExponent(strings.TrimSpace(v))
	}
	return path, nil
}

// noControl refuses control characters (NUL, escape, ...) in a string the
// transcript prints, other than those in allowed.
func (p *parser) noControl(v, field, allowed string) error {
	for i, r := range v {
		if unicode.IsControl(r) && !strings.ContainsRune(allowed, r) {
			return p.errf(field, "control character %q at byte %d: not allowed here", r, i)
		}
	}
	return nil
}

// object decodes raw as a JSON object.
func (p *parser) object(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if isNull(raw) {
		return map[string]json.RawMessage{}, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, p.errf(field, "want a map, got %s", describe(raw))
	}
	return m, nil
}

// keys rejects any key of m not in allowed, naming the first unknown key in
// sorted order so the error is the same on every run.
func (p *parser) keys(m map[string]json.RawMessage, field string, allowed ...string) error {
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return p.errf(join(field, unknown[0]), "unknown key (want one of %s)", strings.Join(allowed, ", "))
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// describe names the JSON type of raw for error messages.
func describe(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "a map"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func (p *parser) str(raw json.RawMessage, field string) (string, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", p.errf(field, "want a string, got %s", describe(raw))
	}
	return v, nil
}

func (p *parser) optString(m map[string]json.RawMessage, key, field string) (string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	return p.str(raw, join(field, key))
}

func (p *parser) requiredString(m map[string]json.RawMessage, key, field string) (string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", p.errf(join(field, key), "required")
	}
	v, err := p.str(raw, join(field, key))
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(v) == "" {
		return "", p.errf(join(field, key), "must not be empty")
	}
	return v, nil
}

// versionString accepts "1.35" and, since YAML reads an unquoted 1.35 as a
// number, 1.35 too.
func (p *parser) versionString(raw json.RawMessage, field string) (string, error) {
	var f json.Number
	if err := json.Unmarshal(raw, &f); err == nil {
		return f.String(), nil
	}
	return p.str(raw, field)
}

func (p *parser) boolean(raw json.RawMessage, field string) (bool, error) {
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, p.errf(field, "want true or false, got %s", describe(raw))
	}
	return v, nil
}

func (p *parser) integer(raw json.RawMessage, field string, min, max int64) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, p.errf(field, "want an integer, got %s", describe(raw))
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, p.errf(field, "want an integer, got %s", n)
	}
	if v < min || v > max {
		return 0, p.errf(field, "%d out of range [%d, %d]", v, min, max)
	}
	return v, nil
}

// quantity accepts a Kubernetes quantity as a string or a YAML number.
func (p *parser) quantity(raw json.RawMessage, field string) (resource.Quantity, error) {
	var text string
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		text = n.String()
	} else if err := json.Unmarshal(raw, &text); err != nil {
		return resource.Quantity{}, p.errf(field, "want a quantity, got %s", describe(raw))
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(text))
	if err != nil {
		return resource.Quantity{}, p.errf(field, "malformed quantity %q: %v", text, err)
	}
	return q, nil
}

func (p *parser) resourceList(raw json.RawMessage, field string) (v1.ResourceList, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	out := v1.ResourceList{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, p.errf(join(field, k), "invalid resource name: %s", strings.Join(errs, "; "))
		}
		q, err := p.quantity(m[k], join(field, k))
		if err != nil {
			return nil, err
		}
		// An amount beyond resizelet's bounds can be neither a node's
		// nor one an expect finds.
		if err := cgconfig.CheckAmount(v1.ResourceName(k), q); err != nil {
			return nil, p.errf(join(field, k), "%v", err)
		}
		out[v1.ResourceName(k)] = q
	}
	return out, nil
}

func (p *parser) duration(raw json.RawMessage, field string) (time.Duration, error) {
	text, err := p.str(raw, field)
	if err != nil {
		return 0, p.errf(field, "want a duration such as \"30s\" or \"3m\", got %s", describe(raw))
	}
	d, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		return 0, p.errf(field, "malformed duration %q: want a number with a unit such as \"30s\" or \"3m\"", text)
	}
	if d <= 0 {
		return 0, p.errf(field, "duration %q must be positive", text)
	}
	return d, nil
}

func (p *parser) oneOf(raw json.RawMessage, field string, allowed ...string) (string, error) {
	v, err := p.str(raw, field)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, v) {
		return "", p.errf(field, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
	return v, nil
}

func (p *parser) node(raw json.RawMessage, s *Scenario) error {
	const f = "node"
	m, err := p.object(raw, f)
	if err != nil {
		return err
	}
	if err := p.keys(m, f, "name", "capacity", "allocatable", "os", "cgroupVersion", "cgroupDriver", "cgroupRoot",
		"cpuManagerPolicy", "memoryManagerPolicy", "swapBehavior", "cpuCFSQuota", "cpuCFSQuotaPeriod",
		"containerCPUWeight", "featureGates", "reconcilePodCgroups", "flushCheckpoints"); err != nil {
		return err
	}
	var n resize.NodeConfig
	s.ContainerWeight = "quadratic"
	if n.Name, err = p.optString(m, "name", f); err != nil {
		return err
	}
	// Capacity keeps the defaults for the resources the file leaves out,
	// so that "capacity: {cpu: 4}" still has memory and pods; allocatable
	// likewise starts from the capacity.
	n.Capacity = core.DefaultCapacity()
	if raw, ok := m["capacity"]; ok {
		c, err := p.resourceList(raw, f+".capacity")
		if err != nil {
			return err
		}
		maps.Copy(n.Capacity, c)
	}
	n.Allocatable = n.Capacity.DeepCopy()
	if raw, ok := m["allocatable"]; ok {
		a, err := p.resourceList(raw, f+".allocatable")
		if err != nil {
			return err
		}
		maps.Copy(n.Allocatable, a)
	}
	// The values of these keys are checked by NodeConfig.Validate; here
	// they only have to be strings.
	for _, c := range []struct {
		key string
		set func(string)
	}{
		{"os", func(v string) { n.OS = v }},
		{"cgroupDriver", func(v string) { n.CgroupDriver = cgconfig.Driver(v) }},
		{"cgroupRoot", func(v string) { n.CgroupRoot = v }},
		{"cpuManagerPolicy", func(v string) { n.CPUManagerPolicy = v }},
		{"memoryManagerPolicy", func(v string) { n.MemoryManagerPolicy = v }},
		{"swapBehavior", func(v string) { n.SwapBehavior = v }},
	} {
		if raw, ok := m[c.key]; ok {
			v, err := p.str(raw, f+"."+c.key)
			if err != nil {
				return err
			}
			c.set(v)
		}
	}
	if raw, ok := m["cgroupVersion"]; ok {
		// The file spells the version; reading the spelling is parsing.
		v, err := p.oneOf(raw, f+".cgroupVersion", "v1", "v2")
		if err != nil {
			return err
		}
		n.CgroupVersion = map[string]cgconfig.Version{"v1": cgconfig.V1, "v2": cgconfig.V2}[v]
	}
	if raw, ok := m["containerCPUWeight"]; ok {
		if s.ContainerWeight, err = p.oneOf(raw, f+".containerCPUWeight", "quadratic", "linear"); err != nil {
			return err
		}
	}
	if raw, ok := m["cpuCFSQuota"]; ok {
		b, err := p.boolean(raw, f+".cpuCFSQuota")
		if err != nil {
			return err
		}
		n.CPUCFSQuota = &b
	}
	if raw, ok := m["cpuCFSQuotaPeriod"]; ok {
		if n.CPUCFSQuotaPeriod, err = p.duration(raw, f+".cpuCFSQuotaPeriod"); err != nil {
			return err
		}
	}
	if raw, ok := m["reconcilePodCgroups"]; ok {
		if n.ReconcilePodCgroups, err = p.boolean(raw, f+".reconcilePodCgroups"); err != nil {
			return err
		}
	}
	if raw, ok := m["flushCheckpoints"]; ok {
		if n.FlushCheckpoints, err = p.boolean(raw, f+".flushCheckpoints"); err != nil {
			return err
		}
	}
	if raw, ok := m["featureGates"]; ok {
		gates, err := p.object(raw, f+".featureGates")
		if err != nil {
			return err
		}
		n.FeatureGates = map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(gates)) {
			b, err := p.boolean(gates[k], f+".featureGates."+k)
			if err != nil {
				return err
			}
			n.FeatureGates[k] = b
		}
	}
	s.Node = n
	return nil
}

// manifest decodes and defaults a pod manifest strictly (unknown fields are
// errors, as kubectl's strict field validation makes them), and records the
// pod as live.
func (p *parser) manifest(raw json.RawMessage, field string) (*v1.Pod, error) {
	m, err := p.object(raw, field)
	if err != nil {
		return nil, err
	}
	if raw, ok := m["apiVersion"]; ok {
		if v, err := p.str(raw, field+".apiVersion"); err != nil {
			return nil, err
		} else if v != "v1" {
			return nil, p.errf(field+".apiVersion", "want v1, got %q", v)
		}
	}
	if raw, ok := m["kind"]; ok {
		if v, err := p.str(raw, field+".kind"); err != nil {
			return nil, err
		} else if v != "Pod" {
			return nil, p.errf(field+".kind", "want Pod, got %q", v)
		}
	}
	if _, ok := m["status"]; ok {
		return nil, p.errf(field+".status", "status is computed and may not be given")
	}
	pod, err := p.decodeManifest(raw, m, field)
	if err != nil {
		return nil, err
	}
	if pod.Name == "" {
		return nil, p.errf(field+".metadata.name", "required")
	}
	if errs := validation.IsDNS1123Subdomain(pod.Name); len(errs) > 0 {
		return nil, p.errf(field+".metadata.name", "invalid pod name %q: %s", pod.Name, strings.Join(errs, "; "))
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	} else if errs := validation.IsDNS1123Label(pod.Namespace); len(errs) > 0 {
		return nil, p.errf(field+".metadata.namespace", "invalid namespace %q: %s", pod.Namespace, strings.Join(errs, "; "))
	}
	// The rest of the metadata (labels, annotations, a UID) as the
	// cluster will check it, and amounts beyond resizelet's bounds, which
	// the cluster would refuse too: both are errors of the file.
	if errs := apiserver.ValidatePodMeta(pod); len(errs) > 0 {
		return nil, p.errf(field+"."+errs[0].Field, "%s", errs[0].ErrorBody())
	}
	if errs := apiserver.ValidateAmounts(pod); len(errs) > 0 {
		return nil, p.errf(field+"."+errs[0].Field, "%s", errs[0].ErrorBody())
	}
	if pod.UID != "" {
		for ref, other := range p.live {
			if other.UID == pod.UID {
				return nil, p.errf(field+".metadata.uid", "UID %q is already pod %s's", pod.UID, ref)
			}
		}
	}
	if pod.Generation == 0 {
		pod.Generation = 1
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, p.errf(field+".spec.containers", "required: at least one container")
	}
	names := map[string]bool{}
	check := func(list string, cs []v1.Container) error {
		for i := range cs {
			c := &cs[i]
			cf := fmt.Sprintf("%s.spec.%s[%d].name", field, list, i)
			if c.Name == "" {
				return p.errf(cf, "required")
			}
			if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
				return p.errf(cf, "invalid container name %q: %s", c.Name, strings.Join(errs, "; "))
			}
			if names[c.Name] {
				return p.errf(cf, "duplicate container name %q", c.Name)
			}
			names[c.Name] = true
			if c.Image == "" {
				c.Image = DefaultImage
			}
		}
		return nil
	}
	if err := check("initContainers", pod.Spec.InitContainers); err != nil {
		return nil, err
	}
	if err := check("containers", pod.Spec.Containers); err != nil {
		return nil, err
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i]
		if c.Name == "" {
			return nil, p.errf(fmt.Sprintf("%s.spec.ephemeralContainers[%d].name", field, i), "required")
		}
		names[c.Name] = true
	}
	ref := PodRef{Namespace: pod.Namespace, Name: pod.Name}
	if _, ok := p.live[ref]; ok {
		return nil, p.errf(field+".metadata.name", "pod %s already exists", ref)
	}
	p.live[ref] = pod
	if p.ever[ref] == nil {
		p.ever[ref] = map[string]bool{}
	}
	for n := range names {
		p.ever[ref][n] = true
	}
	return pod, nil
}

// podRef resolves a pod name of a step: "namespace/name", or a name, which
// means the pod of that name in namespace default, or else the only pod of
// that name. Live pods are searched when live is set, otherwise every pod
// the file has named.
func (p *parser) podRef(raw json.RawMessage, field string, live bool) (PodRef, error) {
	v, err := p.str(raw, field)
	if err != nil {
		return PodRef{}, err
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return PodRef{}, p.errf(field, "required: a pod name")
	}
	exists := func(r PodRef) bool {
		if live {
			_, ok := p.live[r]
			return ok
		}
		_, ok := p.ever[r]
		return ok
	}
	if ns, name, ok := strings.Cut(v, "/"); ok {
		r := PodRef{Namespace: ns, Name: name}
		if !exists(r) {
			return PodRef{}, p.errf(field, "no pod %s in this scenario%s", r, liveNote(live))
		}
		return r, nil
	}
	if r := (PodRef{Namespace: "default", Name: v}); exists(r) {
		return r, nil
	}
	var found []PodRef
	for r := range p.ever {
		if r.Name == v && exists(r) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return PodRef{}, p.errf(field, "no pod %q in this scenario%s", v, liveNote(live))
	}
	return PodRef{}, p.errf(field, "pod name %q is ambiguous: write namespace/name", v)
}

func liveNote(live bool) string {
	if live {
		return " at this step"
	}
	return ""
}

// container checks that the pod has a container of that name.
func (p *parser) container(raw json.RawMessage, field string, pod PodRef) (string, error) {
	v, err := p.str(raw, field)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", p.errf(field, "required: a container name")
	}
	if !p.ever[pod][v] {
		return "", p.errf(field, "pod %s has no container %q", pod, v)
	}
	return v, nil
}

func (p *parser) parseStep(raw json.RawMessage) (Step, error) {
	m, err := p.object(raw, "")
	if err != nil {
		return Step{}, err
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = string(a)
	}
	if len(keys) != 1 {
		if len(keys) == 0 {
			return Step{}, p.errf("", "empty step: want exactly one of %s", strings.Join(names, ", "))
		}
		return Step{}, p.errf(keys[1], "a step has exactly one action key, got %s", strings.Join(keys, ", "))
	}
	key := keys[0]
	body := m[key]
	st := Step{Action: Action(key)}
	switch st.Action {
	case ActionResize:
		err = p.resizeStep(body, &st)
	case ActionAdd:
		err = p.addStep(body, &st)
	case ActionDelete:
		err = p.deleteStep(body, &st)
	case ActionUsage:
		err = p.usageStep(body, &st)
	case ActionExit:
		err = p.exitStep(body, &st)
	case ActionFault:
		err = p.faultStep(body, &st)
	case ActionAdvance:
		st.Duration, err = p.duration(body, "advance")
	case ActionRestartKubelet:
		var mm map[string]json.RawMessage
		if mm, err = p.object(body, "restartKubelet"); err == nil && len(mm) > 0 {
			var list v1.ResourceList
			if err = p.keys(mm, "restartKubelet", "allocatable"); err == nil {
				list, err = p.resourceList(mm["allocatable"], "restartKubelet.allocatable")
			}
			if len(list) > 0 {
				// An empty or null allocatable changes nothing.
				st.Allocatable = list
			}
		}
	case ActionExpect:
		st.Expect, err = p.expect(body)
	default:
		return Step{}, p.errf(key, "unknown step: want one of %s", strings.Join(names, ", "))
	}
	return st, err
}

func (p *parser) resizeStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "resize")
	if err != nil {
		return err
	}
	if err := p.keys(m, "resize", "pod", "patch", "patchType"); err != nil {
		return err
	}
	podRaw, ok := m["pod"]
	if !ok {
		return p.errf("resize.pod", "required")
	}
	if st.Pod, err = p.podRef(podRaw, "resize.pod", true); err != nil {
		return err
	}
	kind := "strategic"
	if raw, ok := m["patchType"]; ok && !isNull(raw) {
		if kind, err = p.oneOf(raw, "resize.patchType", "strategic", "merge", "json"); err != nil {
			return err
		}
	}
	patchRaw, ok := m["patch"]
	if !ok || isNull(patchRaw) {
		return p.errf("resize.patch", "required")
	}
	switch kind {
	case "json":
		st.PatchType = apiserver.JSONPatch
		st.Patch, err = p.jsonPatch(patchRaw, "resize.patch")
	case "merge":
		st.PatchType = apiserver.MergePatch
		st.Patch, err = p.patch(patchRaw, "resize.patch")
	default:
		st.Patch, err = p.patch(patchRaw, "resize.patch")
	}
	return err
}

// jsonPatchOps are the operations of a JSON patch (RFC 6902), with the
// keys each must have besides op and path.
var jsonPatchOps = map[string][]string{
	"add": {"value"}, "remove": nil, "replace": {"value"}, "move": {"from"}, "copy": {"from"}, "test": {"value"},
}

// jsonPatch turns a JSON patch given as a JSON or YAML string, or as a
// YAML list, into JSON, and checks its form: a list of operations, each a
// map of op, path, from and value, with the keys its op needs, pointers
// that are empty or start with "/", and a quantity where an operation
// puts a value into a resource list (a path ending in
// /requests/NAME, /limits/NAME or /overhead/NAME). Whether the operations
// apply to the pod only the API server finds, when the step runs.
func (p *parser) jsonPatch(raw json.RawMessage, field string) ([]byte, error) {
	js := []byte(raw)
	if text, err := p.str(raw, field); err == nil {
		js, err = yaml.YAMLToJSONStrict([]byte(text))
		if err != nil {
			return nil, p.errf(field, "malformed patch: %v", err)
		}
	}
	var ops []json.RawMessage
	if err := json.Unmarshal(js, &ops); err != nil || ops == nil {
		return nil, p.errf(field, "malformed JSON patch: want a list of operations, got %s", describe(js))
	}
	if where, err := hugeExponent(js, ""); err != nil {
		return nil, p.errf(field+where, "%v", err)
	}
	for i, opRaw := range ops {
		f := fmt.Sprintf("%s[%d]", field, i)
		m, err := p.object(opRaw, f)
		if err != nil {
			return nil, err
		}
		if err := p.keys(m, f, "op", "path", "from", "value"); err != nil {
			return nil, err
		}
		opRaw, ok := m["op"]
		if !ok {
			return nil, p.errf(f+".op", "required")
		}
		ops := slices.Sorted(maps.Keys(jsonPatchOps))
		op, err := p.oneOf(opRaw, f+".op", ops...)
		if err != nil {
			return nil, err
		}
		var path string
		for _, key := range append([]string{"path"}, jsonPatchOps[op]...) {
			v, ok := m[key]
			if !ok {
				return nil, p.errf(f+"."+key, "required by %s", op)
			}
			if key == "value" {
				continue
			}
			ptr, err := p.str(v, f+"."+key)
			if err != nil {
				return nil, err
			}
			if ptr != "" && !strings.HasPrefix(ptr, "/") {
				return nil, p.errf(f+"."+key, "%q is not a JSON pointer: want \"\" or a path starting with /", ptr)
			}
			if key == "path" {
				path = ptr
			}
		}
		value, ok := m["value"]
		if !ok || !slices.Contains(jsonPatchOps[op], "value") {
			continue
		}
		segments := strings.Split(path, "/")
		if n := len(segments); n >= 3 && (segments[n-2] == "requests" || segments[n-2] == "limits" || segments[n-2] == "overhead") {
			q, err := p.quantity(value, f+".value")
			if err != nil {
				return nil, err
			}
			if err := cgconfig.CheckAmount(v1.ResourceName(strings.NewReplacer("~1", "/", "~0", "~").Replace(segments[n-1])), q); err != nil {
				return nil, p.errf(f+".value", "%v", err)
			}
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, js); err != nil {
		return nil, p.errf(field, "malformed patch: %v", err)
	}
	return buf.Bytes(), nil
}

// patch turns a patch given as a JSON or YAML string, or as YAML, into JSON,
// and checks that it is a map that decodes into a Pod (so a malformed
// quantity or a list where a map belongs is caught here). Strategic merge
// directives ($patch, $setElementOrder) are allowed through.
func (p *parser) patch(raw json.RawMessage, field string) ([]byte, error) {
	js := []byte(raw)
	if text, err := p.str(raw, field); err == nil {
		js, err = yaml.YAMLToJSONStrict([]byte(text))
		if err != nil {
			return nil, p.errf(field, "malformed patch: %v", err)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil || obj == nil {
		return nil, p.errf(field, "malformed patch: want a map, got %s", describe(js))
	}
	if where, err := hugeExponent(js, ""); err != nil {
		return nil, p.errf(field, "%s: %v", where, err)
	}
	var pod v1.Pod
	if err := json.Unmarshal(js, &pod); err != nil {
		return nil, p.errf(field, "malformed patch: %v", err)
	}
	// An amount beyond resizelet's bounds is refused before the scenario
	// runs; list indexes in the path count in the patch.
	if errs := apiserver.ValidateAmounts(&pod); len(errs) > 0 {
		return nil, p.errf(field, "%s", errs[0].Error())
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, js); err != nil {
		return nil, p.errf(field, "malformed patch: %v", err)
	}
	return buf.Bytes(), nil
}

func (p *parser) addStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "add")
	if err != nil {
		return err
	}
	if err := p.keys(m, "add", "pod"); err != nil {
		return err
	}
	podRaw, ok := m["pod"]
	if !ok || isNull(podRaw) {
		return p.errf("add.pod", "required: a pod manifest")
	}
	st.Manifest, err = p.manifest(podRaw, "add.pod")
	return err
}

func (p *parser) deleteStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "delete")
	if err != nil {
		return err
	}
	if err := p.keys(m, "delete", "pod"); err != nil {
		return err
	}
	podRaw, ok := m["pod"]
	if !ok {
		return p.errf("delete.pod", "required")
	}
	if st.Pod, err = p.podRef(podRaw, "delete.pod", true); err != nil {
		return err
	}
	delete(p.live, st.Pod)
	return nil
}

func (p *parser) podAndContainer(m map[string]json.RawMessage, field string, st *Step) error {
	podRaw, ok := m["pod"]
	if !ok {
		return p.errf(field+".pod", "required")
	}
	var err error
	if st.Pod, err = p.podRef(podRaw, field+".pod", true); err != nil {
		return err
	}
	cRaw, ok := m["container"]
	if !ok {
		return p.errf(field+".container", "required")
	}
	st.Container, err = p.container(cRaw, field+".container", st.Pod)
	return err
}

func (p *parser) usageStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "usage")
	if err != nil {
		return err
	}
	if err := p.keys(m, "usage", "pod", "container", "memory"); err != nil {
		return err
	}
	if err := p.podAndContainer(m, "usage", st); err != nil {
		return err
	}
	memRaw, ok := m["memory"]
	if !ok {
		return p.errf("usage.memory", "required")
	}
	if st.Memory, err = p.quantity(memRaw, "usage.memory"); err != nil {
		return err
	}
	if st.Memory.Sign() < 0 {
		return p.errf("usage.memory", "must not be negative")
	}
	if err := cgconfig.CheckAmount(v1.ResourceMemory, st.Memory); err != nil {
		return p.errf("usage.memory", "%v", err)
	}
	return nil
}

func (p *parser) exitStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "exit")
	if err != nil {
		return err
	}
	if err := p.keys(m, "exit", "pod", "container", "exitCode"); err != nil {
		return err
	}
	if err := p.podAndContainer(m, "exit", st); err != nil {
		return err
	}
	if codeRaw, ok := m["exitCode"]; ok {
		code, err := p.integer(codeRaw, "exit.exitCode", 0, 255)
		if err != nil {
			return err
		}
		st.ExitCode = int32(code)
	}
	return nil
}

func (p *parser) faultStep(raw json.RawMessage, st *Step) error {
	m, err := p.object(raw, "fault")
	if err != nil {
		return err
	}
	if err := p.keys(m, "fault", "call", "pod", "container", "error", "times"); err != nil {
		return err
	}
	callRaw, ok := m["call"]
	if !ok {
		return p.errf("fault.call", "required")
	}
	if st.Call, err = p.oneOf(callRaw, "fault.call", faultCalls...); err != nil {
		return err
	}
	if podRaw, ok := m["pod"]; ok {
		if st.Pod, err = p.podRef(podRaw, "fault.pod", true); err != nil {
			return err
		}
		st.HasPod = true
	}
	if cRaw, ok := m["container"]; ok {
		if !st.HasPod {
			return p.errf("fault.container", "a container needs the pod it belongs to")
		}
		if st.Container, err = p.container(cRaw, "fault.container", st.Pod); err != nil {
			return err
		}
	}
	st.Error = "injected fault"
	if eRaw, ok := m["error"]; ok {
		if st.Error, err = p.str(eRaw, "fault.error"); err != nil {
			return err
		}
		if st.Error == "" {
			return p.errf("fault.error", "must not be empty")
		}
	}
	st.Times = 1
	if tRaw, ok := m["times"]; ok {
		n, err := p.integer(tRaw, "fault.times", 1, 1<<20)
		if err != nil {
			return err
		}
		st.Times = int(n)
	}
	return nil
}
