package systemd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// TreeConn is a Conn that plays systemd over a directory laid out like a
// cgroup filesystem (v2: the root holds cgroup.controllers; v1: the root
// holds the cpu and memory hierarchies), for tests of a Manager on any
// host: starting a slice makes its directories with the kernel's default
// files, setting properties writes them into the files as systemd does,
// stopping removes the directories, and Reload writes every unit's
// properties again, as a daemon-reload does. It knows the properties
// Manager sends; it records every call (Calls).
type TreeConn struct {
	root    string
	version cgroup.Version

	mu    sync.Mutex
	units map[string][]sddbus.Property // by unit name, in the order set
	paths map[string]string            // where each unit's cgroup is
	calls []string
}

// NewTreeConn returns a TreeConn over the tree at root, of the version
// the Manager's FS has there.
func NewTreeConn(root string, version cgroup.Version) *TreeConn {
	return &TreeConn{root: root, version: version, units: map[string][]sddbus.Property{}, paths: map[string]string{}}
}

// Calls returns the calls made so far, one line each: "start a.slice",
// "set a.slice MemoryMax=1048576 CPUWeight=39", "stop a.slice",
// "reset-failed a.slice".
func (c *TreeConn) Calls() []string {
	if !c.made() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// Units returns the names of the units started and not stopped, sorted.
func (c *TreeConn) Units() []string {
	if !c.made() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.units))
	for n := range c.units {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// errTreeConnNotMade is what a TreeConn NewTreeConn did not make answers.
var errTreeConnNotMade = errors.New("systemd: TreeConn not made by NewTreeConn")

// made reports whether NewTreeConn made c.
func (c *TreeConn) made() bool { return c != nil && c.units != nil }

// unitPath returns where the unit's cgroup is, relative to the root: a
// slice where its name puts it, a scope in the slice of its Slice=
// property.
func unitPath(unit string, properties []sddbus.Property) (string, error) {
	if !strings.HasSuffix(unit, ".scope") {
		return cgconfig.ExpandSlice(unit)
	}
	for _, p := range properties {
		if slice, ok := p.Value.Value().(string); ok && p.Name == "Slice" {
			rel, err := cgconfig.ExpandSlice(slice)
			return rel + "/" + unit, err
		}
	}
	return "", fmt.Errorf("tree conn: scope %s has no Slice property", unit)
}

// dirs returns the directories of the unit's cgroup at rel.
func (c *TreeConn) dirs(rel string) ([]string, error) {
	if c.version == cgroup.V2 {
		return []string{filepath.Join(c.root, rel)}, nil
	}
	return []string{filepath.Join(c.root, "cpu", rel), filepath.Join(c.root, "memory", rel)}, nil
}

// StartTransientUnitContext makes the slice's directories with default
// files; a unit that exists is systemd's UnitExists error.
func (c *TreeConn) StartTransientUnitContext(_ context.Context, name, _ string, properties []sddbus.Property, ch chan<- string) (int, error) {
	if !c.made() {
		return 0, errTreeConnNotMade
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "start "+name)
	if _, ok := c.units[name]; ok {
		return 0, godbus.Error{Name: "org.freedesktop.systemd1.UnitExists", Body: []any{"Unit " + name + " already exists."}}
	}
	rel, err := unitPath(name, properties)
	if err != nil {
		return 0, err
	}
	dirs, err := c.dirs(rel)
	if err != nil {
		return 0, err
	}
	c.paths[name] = rel
	for i, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		for file, content := range defaultFiles(c.version, i) {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content+"\n"), 0o644); err != nil {
				return 0, err
			}
		}
	}
	c.units[name] = nil
	ch <- "done"
	return 1, nil
}

// defaultFiles are a new cgroup's files (on v1 the i-th directory: cpu,
// then memory).
func defaultFiles(version cgroup.Version, i int) map[string]string {
	switch {
	case version == cgroup.V2:
		return map[string]string{"cgroup.controllers": "cpu memory", "cgroup.subtree_control": "", "cgroup.procs": "",
			"cpu.max": "max 100000", "cpu.weight": "100", "memory.max": "max", "memory.current": "0"}
	case i == 0:
		return map[string]string{"cgroup.procs": "", "cpu.shares": "1024", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1"}
	}
	return map[string]string{"cgroup.procs": "", "memory.limit_in_bytes": strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10), "memory.usage_in_bytes": "0"}
}

// StopUnitContext removes the slice's directories and everything below
// them; an unknown unit is systemd's NoSuchUnit error.
func (c *TreeConn) StopUnitContext(_ context.Context, name, _ string, ch chan<- string) (int, error) {
	if !c.made() {
		return 0, errTreeConnNotMade
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "stop "+name)
	if _, ok := c.units[name]; !ok {
		return 0, godbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit", Body: []any{"Unit " + name + " not loaded."}}
	}
	stopped := c.paths[name]
	dirs, err := c.dirs(stopped)
	if err != nil {
		return 0, err
	}
	for _, dir := range dirs {
		if err := os.RemoveAll(dir); err != nil {
			return 0, err
		}
	}
	// Stopping a slice stops the units below it.
	for unit, rel := range c.paths {
		if rel == stopped || strings.HasPrefix(rel, stopped+"/") {
			delete(c.units, unit)
			delete(c.paths, unit)
		}
	}
	ch <- "done"
	return 1, nil
}

// ResetFailedUnitContext records the call.
func (c *TreeConn) ResetFailedUnitContext(_ context.Context, name string) error {
	if !c.made() {
		return errTreeConnNotMade
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "reset-failed "+name)
	return nil
}

// GetManagerProperty answers Version as systemd 252 does; any other
// property is unknown.
func (c *TreeConn) GetManagerProperty(name string) (string, error) {
	if name == "Version" {
		return `"252.38-1~deb12u1"`, nil
	}
	return "", fmt.Errorf("tree conn: unknown manager property %s", name)
}

// SetUnitPropertiesContext keeps the properties and writes them into the
// unit's files.
func (c *TreeConn) SetUnitPropertiesContext(_ context.Context, name string, _ bool, properties ...sddbus.Property) error {
	if !c.made() {
		return errTreeConnNotMade
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	line := "set " + name
	for _, p := range properties {
		line += fmt.Sprintf(" %s=%v", p.Name, p.Value.Value())
	}
	c.calls = append(c.calls, line)
	have, ok := c.units[name]
	if !ok {
		return godbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit", Body: []any{"Unit " + name + " not loaded."}}
	}
	for _, p := range properties {
		i := slices.IndexFunc(have, func(h sddbus.Property) bool { return h.Name == p.Name })
		if i < 0 {
			have = append(have, p)
		} else {
			have[i] = p
		}
	}
	c.units[name] = have
	return c.apply(name, have)
}

// Reload writes every unit's properties into its files again, as systemd
// does on a daemon-reload.
func (c *TreeConn) Reload() error {
	if !c.made() {
		return errTreeConnNotMade
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "daemon-reload")
	for name, props := range c.units {
		if err := c.apply(name, props); err != nil {
			return err
		}
	}
	return nil
}

// apply writes the unit's properties into its files, as systemd's
// cgroup_context_apply does: the quota from CPUQuotaPerSecUSec and the
// period, "max" (v2) or -1 (v1) for infinity.
func (c *TreeConn) apply(name string, props []sddbus.Property) error {
	dirs, err := c.dirs(c.paths[name])
	if err != nil {
		return err
	}
	write := func(dir, file, content string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(content+"\n"), 0o644)
	}
	period := uint64(cgconfig.QuotaPeriod)
	perSec, hasQuota := uint64(0), false
	for _, p := range props {
		var err error
		n, _ := p.Value.Value().(uint64)
		switch p.Name {
		case "MemoryMax":
			err = write(dirs[0], cgroup.FileMemoryMax, maxOr(n, "max"))
		case "CPUWeight":
			err = write(dirs[0], cgroup.FileCPUWeight, strconv.FormatUint(n, 10))
		case "MemoryLimit":
			err = write(dirs[1], cgroup.FileMemoryLimit, maxOr(n, strconv.FormatInt(cgconfig.V1UnlimitedMemory, 10)))
		case "CPUShares":
			err = write(dirs[0], cgroup.FileCPUShares, strconv.FormatUint(n, 10))
		case "CPUQuotaPeriodUSec":
			period = n
		case "CPUQuotaPerSecUSec":
			perSec, hasQuota = n, true
		}
		if err != nil {
			return err
		}
	}
	if !hasQuota {
		return nil
	}
	quota := "max"
	if perSec != math.MaxUint64 {
		quota = strconv.FormatUint(perSec*period/1000000, 10)
	}
	if c.version == cgroup.V2 {
		return write(dirs[0], cgroup.FileCPUMax, quota+" "+strconv.FormatUint(period, 10))
	}
	if quota == "max" {
		quota = "-1"
	}
	if err := write(dirs[0], cgroup.FileCFSPeriod, strconv.FormatUint(period, 10)); err != nil {
		return err
	}
	return write(dirs[0], cgroup.FileCFSQuota, quota)
}

// maxOr formats n, or unlimited for systemd's infinity.
func maxOr(n uint64, unlimited string) string {
	if n == math.MaxUint64 {
		return unlimited
	}
	return strconv.FormatUint(n, 10)
}

var _ Conn = (*TreeConn)(nil)
