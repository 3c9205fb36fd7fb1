// Package systemd is the cgroup.Manager of a host whose cgroups systemd
// owns: what the kubelet's systemd cgroup driver does to the slices of
// its pods, through systemd's D-Bus API, with the files read and written
// by a cgroupfs.FS.
//
// Start with New. A slice (kubepods-burstable-pod<uid>.slice) is made as a
// transient unit (StartTransientUnit) and removed by stopping it; its
// limits are the unit's properties first (SetUnitProperties), then its
// files, because systemd writes a unit's properties into its cgroup again
// whenever it reloads (a daemon-reload), so a limit written to the files
// alone would be undone. Every value and order follows the kubelet
// v1.35.4's cgroup manager (pkg/kubelet/cm/cgroup_manager_linux.go:
// Create, Update, Destroy), which hands them to libcontainer's systemd
// manager (github.com/opencontainers/cgroups v0.0.3, systemd/v1.go and
// v2.go: Apply, Set, Destroy); properties.go says which for each.
//
// Conn is the part of systemd's D-Bus API the manager calls, which
// go-systemd's *dbus.Conn has (Dial opens one, Open a manager with it);
// TreeConn plays systemd on a directory tree, for tests on any host.
package systemd

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
	"github.com/resizelet/resizelet/cgroup/cgroupfs"
)

// Conn is the part of systemd's D-Bus API (org.freedesktop.systemd1.Manager)
// the Manager calls, as go-systemd's *dbus.Conn offers it. A start or stop
// sends the job's result ("done", "failed", ...) on ch once systemd has
// finished it.
type Conn interface {
	StartTransientUnitContext(ctx context.Context, name, mode string, properties []sddbus.Property, ch chan<- string) (int, error)
	StopUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	SetUnitPropertiesContext(ctx context.Context, name string, runtime bool, properties ...sddbus.Property) error
	ResetFailedUnitContext(ctx context.Context, name string) error
	GetManagerProperty(name string) (string, error)
}

// Dial connects to systemd as libcontainer does, over the system bus, and
// when that fails (no dbus-daemon) over systemd's private socket
// (/run/systemd/private), which needs root.
func Dial(ctx context.Context) (*sddbus.Conn, error) {
	c, err := sddbus.NewWithContext(ctx)
	if err == nil {
		return c, nil
	}
	c, err2 := sddbus.NewSystemdConnectionContext(ctx)
	if err2 != nil {
		return nil, fmt.Errorf("connect to systemd: system bus: %w; private socket: %w", err, err2)
	}
	return c, nil
}

// jobTimeout bounds the wait for systemd to start or stop a unit, as
// libcontainer's startUnit and stopUnit do.
const jobTimeout = 30 * time.Second

// Manager is a cgroup.Manager whose slices are systemd units. Paths are
// relative to the cgroupfs.FS's root, as for every manager, and name
// slices where systemd puts them: a component "a-b.slice" lives at
// "a.slice/a-b.slice" (cgconfig.SystemdName). A ".scope" directly in a
// slice (a container of the in-memory runtime) is a transient scope with
// an idle process of its own (Create); any other component is a plain
// directory.
//
// It is safe for concurrent use, as the FS and the D-Bus connection are.
type Manager struct {
	fs   *cgroupfs.FS
	conn Conn
	// systemdVersion decides whether CPUQuotaPeriodUSec is sent (242 and
	// later, as libcontainer's addCPUQuota asks); -1 when systemd did not
	// say.
	systemdVersion int
	closer         func() // closes the connection Open made

	// scopes are the scopes Create started, by path, each with the end
	// of the idle process it was started with.
	mu     sync.Mutex
	scopes map[string]func()
}

// New returns the manager of the slices below fs's root, calling systemd
// through conn. It asks systemd for its version once.
func New(fs *cgroupfs.FS, conn Conn) (*Manager, error) {
	if fs == nil || fs.Root() == "" {
		return nil, fmt.Errorf("systemd cgroup manager: %w", cgroup.ErrNoManager)
	}
	if conn == nil {
		return nil, errors.New("systemd cgroup manager: no D-Bus connection to systemd")
	}
	m := &Manager{fs: fs, conn: conn, systemdVersion: -1}
	if v, err := conn.GetManagerProperty("Version"); err == nil {
		m.systemdVersion = parseVersion(v)
	}
	return m, nil
}

// parseVersion reads the number systemd's Version property starts with
// (`"252.38-1~deb12u1"` is 252), or -1.
func parseVersion(v string) int {
	v = strings.Trim(v, `"`)
	n := 0
	i := 0
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		n = n*10 + int(v[i]-'0')
	}
	if i == 0 {
		return -1
	}
	return n
}

// errNotMade is what a Manager that New did not make answers.
var errNotMade = fmt.Errorf("systemd cgroup manager not made by New or Open: %w", cgroup.ErrNoManager)

// made reports whether New made m.
func (m *Manager) made() bool { return m != nil && m.fs != nil && m.conn != nil }

// Driver returns cgconfig.DriverSystemd: the cgroups are the systemd
// driver's, which a backend checks a node's driver against.
func (m *Manager) Driver() cgconfig.Driver { return cgconfig.DriverSystemd }

// Unwrap returns the FS the manager reads and writes files through, so
// that an in-memory runtime finds its SetUsage.
func (m *Manager) Unwrap() cgroup.Manager {
	if !m.made() {
		return nil
	}
	return m.fs
}

// Version reports the cgroup version of the hierarchy.
func (m *Manager) Version() cgroup.Version {
	if !m.made() {
		return 0
	}
	return m.fs.Version()
}

// Exists reports whether the cgroup exists.
func (m *Manager) Exists(path string) bool { return m.made() && m.fs.Exists(path) }

// Get reads the cgroup's values from its files.
func (m *Manager) Get(path string) (cgroup.Values, error) {
	if !m.made() {
		return cgroup.Values{}, fmt.Errorf("get %s: %w", path, errNotMade)
	}
	return m.fs.Get(path)
}

// ReadFile reads one file of the cgroup.
func (m *Manager) ReadFile(path, file string) (string, error) {
	if !m.made() {
		return "", fmt.Errorf("read %s/%s: %w", path, file, errNotMade)
	}
	return m.fs.ReadFile(path, file)
}

// MemoryUsage reads the memory charged to the cgroup.
func (m *Manager) MemoryUsage(path string) (int64, error) {
	if !m.made() {
		return 0, fmt.Errorf("memory usage of %s: %w", path, errNotMade)
	}
	return m.fs.MemoryUsage(path)
}

// Create makes the cgroup and every missing parent, top down: each missing
// slice as a transient unit with the properties libcontainer's Apply(-1)
// starts the kubelet's slices with (sliceProperties); a scope directly in
// a slice (cri-containerd-<id>.scope of the in-memory runtime) as a
// transient scope, delegated, with an idle process, as runc starts a
// container's scope with its process (systemd keeps no scope without one,
// and re-applying a slice disables the controllers of a plain directory
// in it); then the FS makes the directories left and makes sure they have
// the cpu and memory controllers, as libcontainer's Apply does after
// starting the unit (fs2.CreateCgroupPath). A slice must sit where
// systemd puts it (ExpandSlice), or ErrInvalidPath. Creating a cgroup that
// exists is not an error.
func (m *Manager) Create(path string) error {
	if !m.made() {
		return fmt.Errorf("create %s: %w", path, errNotMade)
	}
	if err := checkSlices(path); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if m.fs.Exists(path) {
		return nil
	}
	parent := "-.slice"
	for sub, comp := range components(path) {
		if strings.HasSuffix(comp, ".scope") && sub == path && parent != "-.slice" {
			if err := m.startScope(path, comp, parent); err != nil {
				return fmt.Errorf("create %s: %w", path, err)
			}
		}
		if !isSlice(comp) {
			break
		}
		if !m.fs.Exists(sub) {
			if err := m.start(comp, sliceProperties(m.Version(), comp, parent)); err != nil {
				return fmt.Errorf("create %s: %w", path, err)
			}
		}
		parent = comp
	}
	return m.fs.Create(path)
}

// components yields each ancestor of path below the root, then path
// itself, with its last component: "a" and "a", then "a/b" and "b".
func components(path string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if path == "" {
			return
		}
		start := 0
		for i := 0; i <= len(path); i++ {
			if i == len(path) || path[i] == '/' {
				if !yield(path[:i], path[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}
}

// isSlice reports whether a path component names a slice unit.
func isSlice(comp string) bool { return strings.HasSuffix(comp, ".slice") }

// checkSlices validates path and refuses a slice component that is not
// where systemd puts it: "a-b.slice" is "a.slice/a-b.slice", below the
// root, never below a directory that is not a slice.
func checkSlices(path string) error {
	if err := cgconfig.ValidatePath(path); err != nil {
		return err
	}
	for sub, comp := range components(path) {
		if !isSlice(comp) {
			continue
		}
		if want, err := cgconfig.ExpandSlice(comp); err != nil || want != sub {
			return fmt.Errorf("slice %s at %s: systemd puts it at %q: %w", comp, sub, want, cgroup.ErrInvalidPath)
		}
	}
	return nil
}

// Set gives the slice's unit the properties of the fields of v that are
// set (resourceProperties: the quota rounded to systemd's 10 ms per second
// as libcontainer's addCPUQuota rounds it) and then writes the files with
// the FS (the rounded quota), as libcontainer's systemd Set does: first
// SetUnitProperties, runtime-only, then the fs manager's Set. It returns
// the files whose content changed, with what they held before the call,
// in the FS's order; a refused SetUnitProperties is a failed write of the
// first file v sets, and nothing else is written. A path whose last
// component is not a slice is written with the FS alone.
func (m *Manager) Set(path string, v cgroup.Values) ([]cgroup.Write, error) {
	if !m.made() {
		return nil, fmt.Errorf("set %s: %w", path, errNotMade)
	}
	if err := checkSlices(path); err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	unit := unitOf(path)
	if !isSlice(unit) {
		return m.fs.Set(path, v)
	}
	v = roundedCopy(v)
	files := valueFiles(m.Version(), v)
	before := make([]string, len(files))
	for i, f := range files {
		old, err := m.fs.ReadFile(path, f)
		if err != nil {
			return []cgroup.Write{{Path: path, File: f, Err: err}}, fmt.Errorf("set %s: %w", path, err)
		}
		before[i] = old
	}
	if props := resourceProperties(m.Version(), m.systemdVersion, v); len(props) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
		err := m.conn.SetUnitPropertiesContext(ctx, unit, true, props...)
		cancel()
		if err != nil {
			err = fmt.Errorf("set %s: unable to set unit properties of %s: %w", path, unit, err)
			return []cgroup.Write{{Path: path, File: files[0], Old: before[0], Err: err}}, err
		}
	}
	written, err := m.fs.Set(path, v)
	var out []cgroup.Write
	for i, f := range files {
		if w, ok := writeOf(written, f); ok && w.Err != nil {
			w.Old = before[i]
			return append(out, w), err
		}
		now, rerr := m.fs.ReadFile(path, f)
		if rerr != nil {
			return out, fmt.Errorf("set %s: read %s back: %w", path, f, rerr)
		}
		if now != before[i] {
			out = append(out, cgroup.Write{Path: path, File: f, Old: before[i], New: now})
		}
	}
	return out, err
}

// writeOf finds the write of file among ws.
func writeOf(ws []cgroup.Write, file string) (cgroup.Write, bool) {
	for _, w := range ws {
		if w.File == file {
			return w, true
		}
	}
	return cgroup.Write{}, false
}

// roundedCopy returns v with its own copy of the quota, rounded as the
// systemd driver writes it.
func roundedCopy(v cgroup.Values) cgroup.Values {
	if v.CPUQuota != nil {
		q := *v.CPUQuota
		v.CPUQuota = &q
		v.RoundSystemdQuota()
	}
	return v
}

// valueFiles lists the files the FS's Set writes for v, in its order.
func valueFiles(version cgroup.Version, v cgroup.Values) []string {
	var files []string
	if version == cgroup.V2 {
		if v.MemoryLimit != nil {
			files = append(files, cgroup.FileMemoryMax)
		}
		if v.CPUWeight != nil {
			files = append(files, cgroup.FileCPUWeight)
		}
		if v.CPUQuota != nil || v.CPUPeriod != nil {
			files = append(files, cgroup.FileCPUMax)
		}
		return files
	}
	if v.MemoryLimit != nil {
		files = append(files, cgroup.FileMemoryLimit)
	}
	if v.CPUShares != nil {
		files = append(files, cgroup.FileCPUShares)
	}
	if v.CPUPeriod != nil {
		files = append(files, cgroup.FileCFSPeriod)
	}
	if v.CPUQuota != nil {
		files = append(files, cgroup.FileCFSQuota)
	}
	return files
}

// Delete removes the cgroup: a slice by stopping its unit (systemd removes
// its cgroups in every hierarchy), then whatever directory is left, as
// libcontainer's Destroy does (stopUnit, then the fs manager's Destroy).
// Because stopping a unit kills what runs in it, a cgroup with a child or
// a process is refused first, as rmdir would refuse it (EBUSY); a scope
// Create started is stopped with its idle process (the in-memory runtime
// deletes a container's cgroup once the container is gone). Deleting a
// cgroup that does not exist is not an error.
func (m *Manager) Delete(path string) error {
	if !m.made() {
		return fmt.Errorf("delete %s: %w", path, errNotMade)
	}
	if err := checkSlices(path); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	if err := m.release(path); err != nil {
		return err
	}
	return m.fs.Delete(path)
}

// release stops what systemd runs at path before its directories go, as
// Delete and the cleanup's TreeView need: a scope Create started, with its
// idle process; a slice with no child and no process (a busy one is
// refused as rmdir would refuse it, and nothing is stopped); nothing for
// any other cgroup.
func (m *Manager) release(path string) error {
	done, err := m.stopScope(path)
	if !done {
		unit := unitOf(path)
		if !isSlice(unit) {
			return nil
		}
		if err := m.fs.Busy(path); err != nil {
			return err
		}
		err = m.stop(unit)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}

// unitOf is the last component of path: the unit's name, when it is one.
func unitOf(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// startScope starts the scope unit at path in slice with an idle process
// (cgroupfs.StartIdle): the properties libcontainer's Apply(pid) gives a
// container's scope (Slice=, Delegate=yes, PIDs=, accounting, no default
// dependencies).
func (m *Manager) startScope(path, unit, slice string) error {
	pid, end, err := cgroupfs.StartIdle()
	if err != nil {
		return fmt.Errorf("start an idle process for scope %s: %w", unit, err)
	}
	if err := m.start(unit, scopeProperties(m.Version(), unit, slice, pid)); err != nil {
		end()
		return err
	}
	m.mu.Lock()
	if m.scopes == nil {
		m.scopes = map[string]func(){}
	}
	m.scopes[path] = end
	m.mu.Unlock()
	return nil
}

// stopScope stops the scope Create started at path and ends its idle
// process; done is false for any other cgroup.
func (m *Manager) stopScope(path string) (done bool, err error) {
	m.mu.Lock()
	end, ok := m.scopes[path]
	delete(m.scopes, path)
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	err = m.stop(unitOf(path))
	end()
	return true, err
}

// start starts the transient unit and waits for its job, as libcontainer's
// startUnit does with ignoreExist (Apply(-1)): a unit that exists already
// is not an error.
func (m *Manager) start(unit string, props []sddbus.Property) error {
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	ch := make(chan string, 1)
	if _, err := m.conn.StartTransientUnitContext(ctx, unit, "replace", props, ch); err != nil {
		if isDBusError(err, "org.freedesktop.systemd1.UnitExists") {
			return nil
		}
		return fmt.Errorf("unable to start unit %q: %w", unit, err)
	}
	select {
	case s := <-ch:
		if s != "done" {
			return fmt.Errorf("unable to start unit %q: job %s", unit, s)
		}
	case <-ctx.Done():
		return fmt.Errorf("unable to start unit %q: timed out waiting for systemd", unit)
	}
	return nil
}

// stop stops the unit and waits for its job, then clears a failed state,
// as libcontainer's stopUnit does; a unit systemd does not know is not an
// error.
func (m *Manager) stop(unit string) error {
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	ch := make(chan string, 1)
	if _, err := m.conn.StopUnitContext(ctx, unit, "replace", ch); err != nil {
		if isDBusError(err, "org.freedesktop.systemd1.NoSuchUnit") {
			return nil
		}
		return fmt.Errorf("unable to stop unit %q: %w", unit, err)
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return fmt.Errorf("unable to stop unit %q: timed out waiting for systemd", unit)
	}
	_ = m.conn.ResetFailedUnitContext(ctx, unit)
	return nil
}

// isDBusError reports whether err is the D-Bus error called name.
func isDBusError(err error, name string) bool {
	var derr godbus.Error
	return errors.As(err, &derr) && strings.Contains(derr.Name, name)
}

var _ cgroup.Manager = (*Manager)(nil)

// Open connects to systemd (Dial) and returns the manager of the slices
// below fs's root; its Close closes the connection.
func Open(ctx context.Context, fs *cgroupfs.FS) (*Manager, error) {
	conn, err := Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("systemd cgroup manager: %w", err)
	}
	m, err := New(fs, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	m.closer = conn.Close
	return m, nil
}

// Close ends the idle processes of the scopes Create started that were
// not deleted (systemd removes the scopes with them) and closes the D-Bus
// connection the manager opened (Open); a connection given to New is the
// caller's to close. It returns nil.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	// The idle processes of scopes nobody deleted end, and systemd
	// removes the scopes with them.
	m.mu.Lock()
	scopes := m.scopes
	m.scopes = nil
	m.mu.Unlock()
	for _, end := range scopes {
		end()
	}
	if m.closer != nil {
		m.closer()
	}
	return nil
}
