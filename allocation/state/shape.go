package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resizelet/resizelet/allocation"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// checkShape refuses a checkpoint's data that decodes without error but is
// not what a kubelet writes, where the kubelet's own reading would quietly
// load it as fewer allocations than it holds.
//
// The kubelet reads the data with encoding/json into its
// PodResourceCheckpointInfo (pkg/kubelet/allocation/state/checkpoint.go,
// GetPodResourceCheckpointInfo), which ignores keys it does not know: a
// data string of "null", of {"foo":...}, or of pod records without
// "ContainerResources" (such as the 1.32 layout, containers directly
// under the pod) loads as no allocation at all, and every pod is then
// admitted afresh. resizelet refuses such a file instead, naming the
// place, as it refuses any other file it cannot trust (ErrCorruptCheckpoint;
// the kubelet asks the operator to drain the node and remove the file).
//
// What it asks, level by level (keys match as encoding/json matches them,
// ignoring case; other keys are allowed, as the kubelet allows fields a
// newer kubelet adds, Test_stateCheckpoint_formatUpgraded):
//   - the data is a JSON object; unless it is empty ({}, no entries, what
//     the kubelet writes then), it has "entries";
//   - entries is an object (or null) of pod records keyed by non-empty
//     UIDs, each an object with "ContainerResources" (the kubelet always
//     writes it, null when there are none);
//   - ContainerResources is an object (or null) of container records keyed
//     by non-empty names, each an object that is empty (a container
//     without resources) or has "requests", "limits" or "claims";
//   - PodLevelResources, when not null, is such a record too;
//   - every amount is not negative and within resizelet's bounds
//     (cgconfig.CheckAmount): the checkpoint's amounts become cgroup
//     values, and an amount the kubelet's int64 arithmetic overflows
//     would become a wrong one.
func checkShape(data []byte, entries map[types.UID]allocation.PodResources) error {
	seen, err := checkLayout(data)
	if err != nil {
		return &shapeError{err}
	}
	// encoding/json merges a map given twice (a repeated key, or keys
	// that differ only in case): what it decoded must be what was checked.
	for uid, rec := range entries {
		if seen[string(uid)] == nil {
			return &shapeError{fmt.Errorf("entries[%q]: the pod record comes from a repeated key", uid)}
		}
		for name := range rec.ContainerResources {
			if !seen[string(uid)][name] {
				return &shapeError{fmt.Errorf("entries[%q].ContainerResources[%q]: the container record comes from a repeated key", uid, name)}
			}
		}
	}
	if err := checkAmounts(entries); err != nil {
		return &shapeError{err}
	}
	return nil
}

// shapeError is data that decodes but is not the kubelet's checkpoint.
type shapeError struct{ err error }

func (e *shapeError) Error() string { return e.err.Error() }
func (e *shapeError) Unwrap() error { return e.err }

// checkLayout checks the keys and kinds of values, level by level, and
// returns the containers it checked, by pod UID.
func checkLayout(data []byte) (map[string]map[string]bool, error) {
	top, err := object(data, "the data")
	if err != nil {
		return nil, err
	}
	if len(top) > 0 && !hasKey(top, "entries") {
		return nil, fmt.Errorf("the data has no %q key (it has %s)", "entries", keyList(top))
	}
	seen := map[string]map[string]bool{}
	for _, k := range keysOf(top, "entries") {
		if isNull(top[k]) {
			continue
		}
		pods, err := object(top[k], "entries")
		if err != nil {
			return nil, err
		}
		for _, uid := range slices.Sorted(maps.Keys(pods)) {
			if err := checkPod(uid, pods[uid], seen); err != nil {
				return nil, err
			}
		}
	}
	return seen, nil
}

// checkPod checks one pod record and adds its containers to seen.
func checkPod(uid string, raw json.RawMessage, seen map[string]map[string]bool) error {
	where := fmt.Sprintf("entries[%q]", uid)
	if uid == "" {
		return fmt.Errorf("%s: a pod UID must not be empty", where)
	}
	rec, err := object(raw, where)
	if err != nil {
		return err
	}
	if !hasKey(rec, "ContainerResources") {
		return fmt.Errorf("%s: the pod record has no %q key (it has %s)", where, "ContainerResources", keyList(rec))
	}
	if seen[uid] == nil {
		seen[uid] = map[string]bool{}
	}
	for _, k := range keysOf(rec, "ContainerResources") {
		if err := checkContainers(rec[k], where+".ContainerResources", seen[uid]); err != nil {
			return err
		}
	}
	for _, k := range keysOf(rec, "PodLevelResources") {
		if !isNull(rec[k]) {
			if err := checkRequirements(rec[k], where+".PodLevelResources"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkContainers checks a pod record's ContainerResources and adds the
// container names to seen.
func checkContainers(raw json.RawMessage, where string, seen map[string]bool) error {
	if isNull(raw) {
		return nil
	}
	containers, err := object(raw, where)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(containers)) {
		if name == "" {
			return fmt.Errorf("%s: a container name must not be empty", where)
		}
		if err := checkRequirements(containers[name], fmt.Sprintf("%s[%q]", where, name)); err != nil {
			return err
		}
		seen[name] = true
	}
	return nil
}

// checkRequirements checks one v1.ResourceRequirements record.
func checkRequirements(raw json.RawMessage, where string) error {
	req, err := object(raw, where)
	if err != nil {
		return err
	}
	if len(req) > 0 && !hasKey(req, "requests") && !hasKey(req, "limits") && !hasKey(req, "claims") {
		return fmt.Errorf("%s: not resource requirements: none of %q, %q or %q (it has %s)", where, "requests", "limits", "claims", keyList(req))
	}
	return nil
}

// checkAmounts checks every amount of the decoded entries, in a fixed
// order so that the error is the same on every load.
func checkAmounts(entries map[types.UID]allocation.PodResources) error {
	for _, uid := range slices.Sorted(maps.Keys(entries)) {
		rec := entries[uid]
		where := fmt.Sprintf("entries[%q]", uid)
		for _, name := range slices.Sorted(maps.Keys(rec.ContainerResources)) {
			r := rec.ContainerResources[name]
			if err := checkListAmounts(&r, fmt.Sprintf("%s.ContainerResources[%q]", where, name)); err != nil {
				return err
			}
		}
		if rec.PodLevelResources != nil {
			if err := checkListAmounts(rec.PodLevelResources, where+".PodLevelResources"); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkListAmounts(r *v1.ResourceRequirements, where string) error {
	for _, side := range []struct {
		key  string
		list v1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for _, name := range slices.Sorted(maps.Keys(side.list)) {
			q := side.list[name]
			at := fmt.Sprintf("%s.%s[%s]", where, side.key, name)
			if q.Sign() < 0 {
				return fmt.Errorf("%s: %s is negative", at, q.String())
			}
			if err := cgconfig.CheckAmount(name, q); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
		}
	}
	return nil
}

// errNotObject is the cause when a level of the data is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// object decodes raw as a JSON object; null is not one.
func object(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if isNull(raw) {
		return nil, fmt.Errorf("%s: %w (null)", where, errNotObject)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", where, errNotObject)
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// keysOf returns the keys of m that encoding/json decodes into a field
// named name: those equal to it ignoring case, sorted.
func keysOf(m map[string]json.RawMessage, name string) []string {
	var out []string
	for k := range m {
		if strings.EqualFold(k, name) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func hasKey(m map[string]json.RawMessage, name string) bool { return len(keysOf(m, name)) > 0 }

// keyList names a map's keys for an error, sorted and quoted, at most a
// few of them.
func keyList(m map[string]json.RawMessage) string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) == 0 {
		return "no keys"
	}
	const most = 5
	var b strings.Builder
	for i, k := range keys {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(keys)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", k)
	}
	return b.String()
}
