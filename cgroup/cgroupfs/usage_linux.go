//go:build linux

package cgroupfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/resizelet/resizelet/cgroup"
	"github.com/resizelet/resizelet/cgroup/cgconfig"
)

// holderEnv is the environment variable that turns a program importing this
// package into a memory holder (see runHolder). FS.SetUsage sets it only in
// the environment of the child it starts.
const holderEnv = "RESIZELET_CGROUP_MEMORY_HOLDER"

func init() {
	if s := os.Getenv(holderEnv); s != "" {
		os.Exit(runHolder(s))
	}
}

// runHolder is the memory holder's main: it waits for a byte on stdin (its
// parent moves it into the cgroup first, so that what it allocates next is
// charged there), maps and touches size bytes of anonymous memory, says
// "ready", and keeps the memory until stdin closes. Anonymous memory cannot
// be reclaimed without swap, so the kernel must refuse a lower v1 limit
// (EBUSY) and OOM-kills the holder below a v2 limit, which frees it, just
// as cgroup.SimKernel models usage.
func runHolder(s string) int {
	size, err := strconv.Atoi(s)
	if err != nil || size < 0 {
		return 2
	}
	var b [1]byte
	if _, err := os.Stdin.Read(b[:]); err != nil {
		return 1
	}
	if size > 0 {
		mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 1
		}
		for i := 0; i < len(mem); i += cgconfig.PageSize {
			mem[i] = 1
		}
		defer syscall.Munmap(mem)
	}
	os.Stdout.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// usageState is the set of memory holders, one per cgroup at most, and the
// OOM-kill callbacks.
type usageState struct {
	mu      sync.Mutex
	holders map[string]*holder
	oomFns  []func(path string)
}

// holder is one memory holder process in a cgroup.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed when the process has been reaped
	err   error         // its exit, valid after done
}

func (h *holder) killedBySignal() bool {
	var ee *exec.ExitError
	if !errors.As(h.err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// OnOOMKill registers fn to be called with a cgroup's path when the kernel
// OOM-kills the memory holder SetUsage put there. With OnOOMKill and
// SetUsage, FS is the cgroup model a simulated runtime (cri.SimContainerd) needs
// to charge memory to real cgroups.
func (f *FS) OnOOMKill(fn func(path string)) {
	if !f.made() {
		return
	}
	f.usage.mu.Lock()
	defer f.usage.mu.Unlock()
	f.usage.oomFns = append(f.usage.oomFns, fn)
}

// SetUsage makes the cgroup at path really use about bytes of memory (plus
// the small runtime of the process that holds it): it replaces the
// cgroup's memory holder, a child process running this same program, with
// one that holds bytes of anonymous memory; 0 just ends the holder. A
// holder the kernel OOM-kills (usage above the limit, or a cgroup v2 limit
// lowered below it) is reported to the OnOOMKill callbacks before SetUsage
// or Set returns. A cgroup with a holder cannot be deleted (EBUSY), as with
// any process.
func (f *FS) SetUsage(path string, bytes int64) error {
	if !f.made() {
		return fmt.Errorf("set usage %s: %w", path, errNotMade)
	}
	if err := cgconfig.ValidatePath(path); err != nil {
		return fmt.Errorf("set usage %s: %w", path, err)
	}
	if bytes < 0 {
		return fmt.Errorf("set usage %s to %d: %w", path, bytes, syscall.EINVAL)
	}
	if !f.Exists(path) {
		return fmt.Errorf("set usage %s: %w", path, cgroup.ErrNotExist)
	}
	f.usage.mu.Lock()
	old := f.usage.holders[path]
	delete(f.usage.holders, path)
	f.usage.mu.Unlock()
	if old != nil {
		old.stdin.Close()
		<-old.done
	}
	if bytes == 0 {
		return nil
	}
	h, err := f.startHolder(path, bytes)
	if err != nil {
		return fmt.Errorf("set usage %s to %d: %w", path, bytes, err)
	}
	select {
	case <-h.done:
		// It died while allocating: the kernel OOM-killed it.
		if h.killedBySignal() {
			f.notifyOOM(path)
			return nil
		}
		return fmt.Errorf("set usage %s to %d: memory holder: %v", path, bytes, h.err)
	default:
	}
	f.usage.mu.Lock()
	if f.usage.holders == nil {
		f.usage.holders = map[string]*holder{}
	}
	f.usage.holders[path] = h
	f.usage.mu.Unlock()
	return nil
}

// startHolder starts a holder, moves it into the cgroup, lets it allocate
// and waits until it is ready or dead.
func (f *FS) startHolder(path string, bytes int64) (*holder, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), holderEnv+"="+strconv.FormatInt(bytes, 10))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &holder{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line) == "ready"
		io.Copy(io.Discard, stdout)
		h.err = cmd.Wait()
		close(h.done)
	}()
	pid := strconv.Itoa(cmd.Process.Pid)
	dirs := []string{join(f.root, path)}
	if f.version == cgroup.V1 {
		dirs = []string{join(f.mounts["memory"], path), join(f.mounts["cpu"], path)}
	}
	for _, d := range dirs {
		if err := writeExisting(d+"/cgroup.procs", pid); err != nil {
			cmd.Process.Kill()
			<-h.done
			return nil, fmt.Errorf("move memory holder into %s: %w", d, kernelErr(err))
		}
	}
	if _, err := stdin.Write([]byte{'g'}); err != nil {
		cmd.Process.Kill()
		<-h.done
		return nil, err
	}
	if !<-ready {
		<-h.done
	}
	return h, nil
}

// StartIdle starts a child process of this program that does nothing
// and holds no memory until end is called: a process to start a systemd
// scope with, which systemd requires and removes the scope without (the
// systemd cgroup manager starts the in-memory runtime's container scopes
// so). end closes its input, which makes it exit, and reaps it; one
// killed meanwhile (the scope stopped) is reaped the same.
func StartIdle() (pid int, end func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, nil, err
	}
	cmd := exec.Command(exe)
	// A holder of 0 bytes that is never told to go: it waits on its input.
	cmd.Env = append(os.Environ(), holderEnv+"=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	var once sync.Once
	return cmd.Process.Pid, func() {
		once.Do(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
	}, nil
}

// hasHolders reports whether SetUsage keeps any holder, so that Set does
// the OOM-kill bookkeeping only when it can matter.
func (f *FS) hasHolders() bool {
	f.usage.mu.Lock()
	defer f.usage.mu.Unlock()
	return len(f.usage.holders) > 0
}

// oomKills returns the oom_kill count of memory.events in dir (v2; it
// counts the whole subtree), or -1.
func oomKills(dir string) int {
	s, err := read(dir, cgroup.FileMemoryEvents)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(s, "\n") {
		if k, v, _ := strings.Cut(line, " "); k == "oom_kill" {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

// reapOOMKills runs after a successful write of a v2 memory.max on path
// whose oom_kill count was before: the kernel OOM-kills during the write,
// so the holders it killed in path or below are waited for and reported
// before Set returns, as cgroup.SimKernel reports them.
func (f *FS) reapOOMKills(path string, before int) {
	after := oomKills(join(f.root, path))
	if before < 0 || after <= before {
		return
	}
	f.usage.mu.Lock()
	type entry struct {
		path string
		h    *holder
	}
	var hs []entry
	for p, h := range f.usage.holders {
		if path == "" || p == path || strings.HasPrefix(p, path+"/") {
			hs = append(hs, entry{p, h})
		}
	}
	f.usage.mu.Unlock()
	exited := make(chan entry, len(hs))
	for _, e := range hs {
		go func() {
			<-e.h.done
			exited <- e
		}()
	}
	// The kills were delivered during the write; dying processes are
	// reaped within milliseconds. The bound only guards against a kill of
	// a process that is not a holder.
	deadline := time.After(10 * time.Second)
	for n := 0; n < after-before && n < len(hs); n++ {
		select {
		case e := <-exited:
			if !e.h.killedBySignal() {
				n--
				continue
			}
			f.usage.mu.Lock()
			if f.usage.holders[e.path] == e.h {
				delete(f.usage.holders, e.path)
			}
			f.usage.mu.Unlock()
			f.notifyOOM(e.path)
		case <-deadline:
			return
		}
	}
}

func (f *FS) notifyOOM(path string) {
	f.usage.mu.Lock()
	fns := append([]func(string){}, f.usage.oomFns...)
	f.usage.mu.Unlock()
	for _, fn := range fns {
		fn(path)
	}
}
