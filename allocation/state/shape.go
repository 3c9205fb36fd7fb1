package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

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
//
// encoding/json merges a map given twice (a repeated key, or keys that
// differ only in case) and keeps the last of a repeated map key: every
// occurrence of every key is checked, so whatever it decoded was checked.
func checkShape(data []byte, entries map[types.UID]allocation.PodResources) error {
	if err := checkLayout(data); err != nil {
		return &shapeError{err}
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

// layoutError is a layout error at a place in the data, such as
// `entries["p"].ContainerResources`.
type layoutError struct {
	at  string
	err error
}

func (e *layoutError) Error() string { return e.at + ": " + e.err.Error() }
func (e *layoutError) Unwrap() error { return e.err }

// within places err, an error of a value or of a place inside it, in the
// value at at.
func within(at string, err error) error {
	if err == nil {
		return nil
	}
	if le, ok := err.(*layoutError); ok {
		return &layoutError{at + le.at, le.err}
	}
	return &layoutError{at, err}
}

// checkLayout checks the keys and kinds of values of data, level by
// level, in one pass over the bytes that copies none of them. data must
// be valid JSON (json.Unmarshal accepted it).
func checkLayout(data []byte) error {
	if err := isObject(data); err != nil {
		return within("the data", err)
	}
	hasEntries := false
	err := eachMember(data, func(key, val []byte) error {
		if !strings.EqualFold(string(key), "entries") {
			return nil
		}
		hasEntries = true
		if kind(val) == 'n' {
			return nil
		}
		if err := isObject(val); err != nil {
			return within("entries", err)
		}
		return eachMember(val, func(uid, rec []byte) error {
			err := checkPod(rec)
			if len(uid) == 0 {
				err = errors.New("a pod UID must not be empty")
			}
			if err != nil {
				return within(fmt.Sprintf("entries[%q]", uid), err)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !hasEntries && kind(data[objectStart(data)+1:]) != '}' {
		return fmt.Errorf("the data has no %q key (it has %s)", "entries", keyList(data))
	}
	return nil
}

// checkPod checks one pod record. A record without ContainerResources is
// reported before any error inside the record.
func checkPod(raw []byte) error {
	if err := isObject(raw); err != nil {
		return err
	}
	hasContainers := false
	inside := eachMember(raw, func(key, val []byte) error {
		switch {
		case strings.EqualFold(string(key), "ContainerResources"):
			hasContainers = true
			return within(".ContainerResources", checkContainers(val))
		case strings.EqualFold(string(key), "PodLevelResources") && kind(val) != 'n':
			return within(".PodLevelResources", checkRequirements(val))
		}
		return nil
	})
	if !hasContainers {
		return fmt.Errorf("the pod record has no %q key (it has %s)", "ContainerResources", keyList(raw))
	}
	return inside
}

// checkContainers checks a pod record's ContainerResources.
func checkContainers(raw []byte) error {
	if kind(raw) == 'n' {
		return nil
	}
	if err := isObject(raw); err != nil {
		return err
	}
	return eachMember(raw, func(name, val []byte) error {
		if len(name) == 0 {
			return errors.New("a container name must not be empty")
		}
		if err := checkRequirements(val); err != nil {
			return within(fmt.Sprintf("[%q]", name), err)
		}
		return nil
	})
}

// checkRequirements checks one v1.ResourceRequirements record.
func checkRequirements(raw []byte) error {
	if err := isObject(raw); err != nil {
		return err
	}
	keys, known := 0, false
	_ = eachMember(raw, func(key, _ []byte) error {
		keys++
		for _, name := range []string{"requests", "limits", "claims"} {
			known = known || strings.EqualFold(string(key), name)
		}
		return nil
	})
	if keys > 0 && !known {
		return fmt.Errorf("not resource requirements: none of %q, %q or %q (it has %s)", "requests", "limits", "claims", keyList(raw))
	}
	return nil
}

// checkAmounts checks every amount of the decoded entries. The error is
// the same on every load: it is about the first bad amount in UID,
// container, requests-then-limits and resource name order. The records
// are first checked in no order and without naming anything, which is
// all a valid file costs.
func checkAmounts(entries map[types.UID]allocation.PodResources) error {
	var bad []types.UID
	for uid, rec := range entries {
		if !amountsFit(rec) {
			bad = append(bad, uid)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	uid := slices.Min(bad)
	rec := entries[uid]
	where := fmt.Sprintf("entries[%q]", uid)
	for _, name := range slices.Sorted(maps.Keys(rec.ContainerResources)) {
		r := rec.ContainerResources[name]
		if err := checkListAmounts(&r, fmt.Sprintf("%s.ContainerResources[%q]", where, name)); err != nil {
			return err
		}
	}
	return checkListAmounts(rec.PodLevelResources, where+".PodLevelResources")
}

// amountsFit reports whether every amount of rec is not negative and
// within the bounds.
func amountsFit(rec allocation.PodResources) bool {
	fit := func(list v1.ResourceList) bool {
		for name, q := range list {
			if q.Sign() < 0 || !cgconfig.AmountFits(name, q) {
				return false
			}
		}
		return true
	}
	for _, r := range rec.ContainerResources {
		if !fit(r.Requests) || !fit(r.Limits) {
			return false
		}
	}
	return rec.PodLevelResources == nil || fit(rec.PodLevelResources.Requests) && fit(rec.PodLevelResources.Limits)
}

// checkListAmounts checks the amounts of r, if any, in order, and names
// the first bad one.
func checkListAmounts(r *v1.ResourceRequirements, where string) error {
	if r == nil {
		return nil
	}
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

// The helpers below walk JSON that is known to be valid: they look at as
// few bytes as they can and never fail.

// kind returns the first byte of the JSON value raw: '{', '[', '"', 'n'
// (null), 't', 'f', or the start of a number.
func kind(raw []byte) byte { return raw[objectStart(raw)] }

// objectStart returns the index of the first byte of raw that is not
// white space.
func objectStart(raw []byte) int {
	i := 0
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isObject says why raw is not a JSON object, or returns nil.
func isObject(raw []byte) error {
	switch kind(raw) {
	case '{':
		return nil
	case 'n':
		return fmt.Errorf("%w (null)", errNotObject)
	}
	return errNotObject
}

// eachMember calls fn with the key and the value of each member of the
// JSON object raw, in order, and stops at the first error fn returns.
// The key is decoded as encoding/json decodes it; the value is raw's
// bytes, without the white space around it.
func eachMember(raw []byte, fn func(key, val []byte) error) error {
	i := objectStart(raw) + 1
	for {
		i += objectStart(raw[i:])
		if raw[i] == '}' {
			return nil
		}
		end := valueEnd(raw, i)
		key := decodeKey(raw[i:end])
		i = end + objectStart(raw[end:]) + 1 // past the colon
		i += objectStart(raw[i:])
		end = valueEnd(raw, i)
		if err := fn(key, raw[i:end]); err != nil {
			return err
		}
		i = end + objectStart(raw[end:])
		if raw[i] == ',' {
			i++
		}
	}
}

// valueEnd returns the index just past the JSON value that starts at
// raw[i].
func valueEnd(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		for i++; raw[i] != '"'; i++ {
			if raw[i] == '\\' {
				i++
			}
		}
		return i + 1
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch raw[i] {
			case '"':
				i = valueEnd(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != ',' && raw[i] != '}' && raw[i] != ']' {
		i++
	}
	return i
}

// decodeKey decodes the JSON string token tok as encoding/json does:
// escapes, and invalid UTF-8 as U+FFFD. Keys without either are tok's
// own bytes.
func decodeKey(tok []byte) []byte {
	inner := tok[1 : len(tok)-1]
	if !bytes.ContainsRune(inner, '\\') && utf8.Valid(inner) {
		return inner
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return inner // not reached: tok is a valid JSON string
	}
	return []byte(s)
}

// keyList names the keys of the JSON object raw for an error, sorted and
// quoted, at most a few of them.
func keyList(raw []byte) string {
	var keys []string
	_ = eachMember(raw, func(key, _ []byte) error {
		keys = append(keys, string(key))
		return nil
	})
	slices.Sort(keys)
	keys = slices.Compact(keys)
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
