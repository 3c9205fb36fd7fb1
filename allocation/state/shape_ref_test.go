package state

// The layout check as it was before the one-pass walk (shape.go), kept
// as the reference the fuzzer compares checkLayout with: it decodes each
// level into a map of json.RawMessage, and then makes sure that what
// encoding/json decoded is what it checked.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
)

// refAccepts reports whether the reference check accepts data's layout
// for the decoded entries.
func refAccepts(data []byte, entries map[types.UID]allocation.PodResources) bool {
	seen, err := refCheckLayout(data)
	if err != nil {
		return false
	}
	for uid, rec := range entries {
		if seen[string(uid)] == nil {
			return false
		}
		for name := range rec.ContainerResources {
			if !seen[string(uid)][name] {
				return false
			}
		}
	}
	return true
}

// checkLayout checks the keys and kinds of values, level by level, and
// returns the containers it checked, by pod UID.
func refCheckLayout(data []byte) (map[string]map[string]bool, error) {
	top, err := refObject(data, "the data")
	if err != nil {
		return nil, err
	}
	if len(top) > 0 && !refHasKey(top, "entries") {
		return nil, fmt.Errorf("the data has no %q key (it has %s)", "entries", "...")
	}
	seen := map[string]map[string]bool{}
	for _, k := range refKeysOf(top, "entries") {
		if refIsNull(top[k]) {
			continue
		}
		pods, err := refObject(top[k], "entries")
		if err != nil {
			return nil, err
		}
		for _, uid := range slices.Sorted(maps.Keys(pods)) {
			if err := refCheckPod(uid, pods[uid], seen); err != nil {
				return nil, err
			}
		}
	}
	return seen, nil
}

// checkPod checks one pod record and adds its containers to seen.
func refCheckPod(uid string, raw json.RawMessage, seen map[string]map[string]bool) error {
	where := fmt.Sprintf("entries[%q]", uid)
	if uid == "" {
		return fmt.Errorf("%s: a pod UID must not be empty", where)
	}
	rec, err := refObject(raw, where)
	if err != nil {
		return err
	}
	if !refHasKey(rec, "ContainerResources") {
		return fmt.Errorf("%s: the pod record has no %q key (it has %s)", where, "ContainerResources", "...")
	}
	if seen[uid] == nil {
		seen[uid] = map[string]bool{}
	}
	for _, k := range refKeysOf(rec, "ContainerResources") {
		if err := refCheckContainers(rec[k], where+".ContainerResources", seen[uid]); err != nil {
			return err
		}
	}
	for _, k := range refKeysOf(rec, "PodLevelResources") {
		if !refIsNull(rec[k]) {
			if err := refCheckRequirements(rec[k], where+".PodLevelResources"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkContainers checks a pod record's ContainerResources and adds the
// container names to seen.
func refCheckContainers(raw json.RawMessage, where string, seen map[string]bool) error {
	if refIsNull(raw) {
		return nil
	}
	containers, err := refObject(raw, where)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(containers)) {
		if name == "" {
			return fmt.Errorf("%s: a container name must not be empty", where)
		}
		if err := refCheckRequirements(containers[name], fmt.Sprintf("%s[%q]", where, name)); err != nil {
			return err
		}
		seen[name] = true
	}
	return nil
}

// checkRequirements checks one v1.ResourceRequirements record.
func refCheckRequirements(raw json.RawMessage, where string) error {
	req, err := refObject(raw, where)
	if err != nil {
		return err
	}
	if len(req) > 0 && !refHasKey(req, "requests") && !refHasKey(req, "limits") && !refHasKey(req, "claims") {
		return fmt.Errorf("%s: not resource requirements: none of %q, %q or %q (it has %s)", where, "requests", "limits", "claims", "...")
	}
	return nil
}

// object decodes raw as a JSON object; null is not one.
func refObject(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if refIsNull(raw) {
		return nil, fmt.Errorf("%s: %w (null)", where, errNotObject)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", where, errNotObject)
	}
	return m, nil
}

func refIsNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// keysOf returns the keys of m that encoding/json decodes into a field
// named name: those equal to it ignoring case, sorted.
func refKeysOf(m map[string]json.RawMessage, name string) []string {
	var out []string
	for k := range m {
		if strings.EqualFold(k, name) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func refHasKey(m map[string]json.RawMessage, name string) bool { return len(refKeysOf(m, name)) > 0 }
