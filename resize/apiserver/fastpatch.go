package apiserver

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// Most resize patches say nothing but new requests and limits of named
// containers:
//
//	{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}
//
// readResizePatch reads a patch of exactly that form (containers, init
// containers and spec.resources; requests and limits of quantity strings)
// straight into edits, so that ApplyResize can skip the JSON round trip and
// the strategic merge. Anything else is left to the general path: another
// field, a "$patch" or "$setElementOrder" directive, a null, a number, an
// empty object or list, a key given twice, an escape or a byte outside
// printable ASCII in a string, a quantity that does not parse, YAML, or
// JSON that is not valid. What it accepts, the general path would read
// the same way, and TestFastPatchMatchesStrategicMerge and
// FuzzFastPatch hold the two to the same results.
func readResizePatch(patch []byte) (podEdit, bool) {
	s := patchScanner{b: patch}
	var e podEdit
	ok := s.object(func(key string) bool {
		return key == "spec" && s.object(func(key string) bool {
			switch key {
			case "containers":
				return e.containers == nil && s.containerList(&e, &e.containers)
			case "initContainers":
				return e.initContainers == nil && s.containerList(&e, &e.initContainers)
			case "resources":
				if e.podLevel != nil {
					return false
				}
				var pl containerEdit
				if !s.resources(&e, &pl) {
					return false
				}
				e.podLevel = &pl
				return true
			}
			return false
		})
	})
	if !ok {
		return podEdit{}, false
	}
	s.space()
	return e, s.i == len(s.b)
}

// patchScanner reads the narrow JSON of readResizePatch.
type patchScanner struct {
	b []byte
	i int
}

func (s *patchScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c, if it comes next.
func (s *patchScanner) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes and returns its
// bytes (a slice of the patch).
func (s *patchScanner) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// object reads a non-empty object whose keys member accepts (member reads
// the value); a key given twice is refused.
func (s *patchScanner) object(member func(key string) bool) bool {
	if !s.next('{') {
		return false
	}
	// The narrow form has seven keys: a key outside them, or one seen
	// before in this object, is refused.
	var seen [8]string
	n := 0
	for {
		key, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		k := knownKey(key)
		if k == "" || slices.Contains(seen[:n], k) {
			return false
		}
		seen[n] = k
		n++
		if !member(k) {
			return false
		}
		if s.next(',') {
			continue
		}
		return s.next('}')
	}
}

// knownKey returns the key as a constant string when it is one the
// narrow form has, so that reading it allocates nothing.
func knownKey(key []byte) string {
	for _, k := range [...]string{"spec", "containers", "initContainers", "resources", "name", "requests", "limits"} {
		if string(key) == k {
			return k
		}
	}
	return ""
}

// containerList reads a non-empty list of {"name": ..., "resources": ...}.
func (s *patchScanner) containerList(e *podEdit, list *[]containerEdit) bool {
	if !s.next('[') {
		return false
	}
	for {
		var c containerEdit
		hasName, hasResources := false, false
		if !s.object(func(key string) bool {
			switch key {
			case "name":
				name, ok := s.str()
				c.name, hasName = string(name), ok
				return ok
			case "resources":
				hasResources = s.resources(e, &c)
				return hasResources
			}
			return false
		}) || !hasName || !hasResources {
			return false
		}
		*list = append(*list, c)
		if s.next(',') {
			continue
		}
		return s.next(']')
	}
}

// resources reads {"requests": {...}, "limits": {...}} (one or both) into
// c's ranges of e.quantities. The two lists may come in either order; a
// containerEdit keeps each as one range, so a second list is read after
// the first's range is closed.
func (s *patchScanner) resources(e *podEdit, c *containerEdit) bool {
	return s.object(func(key string) bool {
		start := len(e.quantities)
		if !s.quantities(e) {
			return false
		}
		switch key {
		case "requests":
			c.reqStart, c.reqEnd, c.hasReqs = start, len(e.quantities), true
		case "limits":
			c.limStart, c.limEnd, c.hasLimits = start, len(e.quantities), true
		default:
			return false
		}
		return true
	})
}

// quantities reads a non-empty object of resource names and quantity
// strings, each name once.
func (s *patchScanner) quantities(e *podEdit) bool {
	if !s.next('{') {
		return false
	}
	start := len(e.quantities)
	for {
		name, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		value, ok := s.str()
		if !ok {
			return false
		}
		rn := resourceName(name)
		for _, q := range e.quantities[start:] {
			if q.name == rn {
				return false
			}
		}
		// The decoder hands Quantity.UnmarshalJSON the string, which
		// parses it with the white space around it trimmed. Amounts
		// beyond resizelet's bounds (and exponents too large to parse)
		// take the general way, which refuses them before comparing.
		text := strings.TrimSpace(string(value))
		if CheckExponent(text) != nil {
			return false
		}
		q, err := resource.ParseQuantity(text)
		if err != nil || !cgconfig.AmountFits(rn, q) {
			return false
		}
		e.quantities = append(e.quantities, quantityEdit{name: rn, q: q})
		if s.next(',') {
			continue
		}
		return s.next('}')
	}
}

// resourceName returns the name, as a constant for cpu and memory.
func resourceName(b []byte) v1.ResourceName {
	switch string(b) {
	case "cpu":
		return v1.ResourceCPU
	case "memory":
		return v1.ResourceMemory
	}
	return v1.ResourceName(b)
}
