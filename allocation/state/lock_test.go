package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lockHelperEnv, set to a directory, makes the test binary a child that
// locks that directory (lockHelper) instead of running the tests.
const lockHelperEnv = "RESIZELET_STATE_LOCK_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(lockHelperEnv); dir != "" {
		os.Exit(lockHelper(dir))
	}
	os.Exit(m.Run())
}

// lockHelper locks dir as node "child", says "locked" on stdout, and then
// does what stdin says, line by line: "unlock" unlocks and says
// "unlocked". It exits when stdin ends.
func lockHelper(dir string) int {
	l, err := LockDir(dir, "child")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("locked")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "unlock" {
			if err := l.Unlock(); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println("unlocked")
		}
	}
	return 0
}

// child is a lockHelper process.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startChild starts a process that locks dir, and waits until it has.
func startChild(t *testing.T, dir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		_ = c.in.Close()
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	c.expect(t, "locked")
	return c
}

// expect reads the child's next line and fails unless it is want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("the child ended before saying %q: %v", want, c.out.Err())
	}
	if got := c.out.Text(); got != want {
		t.Fatalf("the child said %q, want %q", got, want)
	}
}

// wantHeld checks that err is a refusal naming dir and the holder.
func wantHeld(t *testing.T, err error, dir, holder string) {
	t.Helper()
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("LockDir() = %v, want an error wrapping ErrHeld", err)
	}
	want := fmt.Sprintf("checkpoint directory %s is held by %s: checkpoints held by another node", dir, holder)
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestLockDirInOneProcess: a second lock of a directory fails in the
// process that holds it (a flock belongs to the open file description,
// not to the process), naming the holder; after Unlock, which may be
// called again, the directory can be locked again, and the lock file
// stays.
func TestLockDirInOneProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoints")
	a, err := LockDir(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm()&^0o750 != 0 {
		t.Errorf("the created directory: %v, %v; want a directory of mode 0750 or less (umask)", info, err)
	}
	_, err = LockDir(dir, "b")
	wantHeld(t, err, dir, fmt.Sprintf(`node "a" (pid %d)`, os.Getpid()))
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := a.Unlock(); err != nil {
		t.Errorf("a second Unlock: %v", err)
	}
	if _, err := os.Stat(a.Path()); err != nil {
		t.Errorf("Unlock removed the lock file: %v", err)
	}
	b, err := LockDir(dir, "b")
	if err != nil {
		t.Fatalf("LockDir after Unlock: %v", err)
	}
	defer b.Unlock()
	_, err = LockDir(dir, "c")
	wantHeld(t, err, dir, fmt.Sprintf(`node "b" (pid %d)`, os.Getpid()))
}

// TestLockDirAcrossProcesses: a directory another process holds is
// refused, naming that process; it is free once that process unlocks it,
// and once that process is killed without unlocking.
func TestLockDirAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir)
	_, err := LockDir(dir, "parent")
	wantHeld(t, err, dir, fmt.Sprintf(`node "child" (pid %d)`, c.cmd.Process.Pid))
	if _, err := fmt.Fprintln(c.in, "unlock"); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "unlocked")
	l, err := LockDir(dir, "parent")
	if err != nil {
		t.Fatalf("LockDir after the child unlocked: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}

	c = startChild(t, dir)
	_, err = LockDir(dir, "parent")
	wantHeld(t, err, dir, fmt.Sprintf(`node "child" (pid %d)`, c.cmd.Process.Pid))
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	l, err = LockDir(dir, "parent")
	if err != nil {
		t.Fatalf("LockDir after the holder was killed: %v", err)
	}
	defer l.Unlock()
}

// TestLockDirRefusesAnIrregularLockFile: a lock file that is not a
// regular file (here a directory) is an error, not a lock.
func TestLockDirRefusesAnIrregularLockFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, LockFile), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := LockDir(dir, "a")
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(dir, LockFile)) {
		t.Fatalf("LockDir() = %v, %v; want ErrNotRegular naming the lock file", l, err)
	}
}

// TestHold: one holder at a time; a second is refused naming the first;
// release is idempotent, and a release called again does not release a
// later holder.
func TestHold(t *testing.T) {
	s := NewMemory()
	release, err := s.Hold("a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Hold("b")
	if !errors.Is(err, ErrHeld) || err.Error() != `in-memory checkpoint is held by node "a": checkpoints held by another node` {
		t.Fatalf("a second Hold = %v, want ErrHeld naming a", err)
	}
	release()
	releaseB, err := s.Hold("b")
	if err != nil {
		t.Fatalf("Hold after release: %v", err)
	}
	release()
	if _, err := s.Hold("c"); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("after a's release was called again, Hold(c) = %v, want b still holding", err)
	}
	releaseB()
	if _, err := s.Hold("c"); err != nil {
		t.Fatalf("Hold after b's release: %v", err)
	}
}

func TestHoldFileStore(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir)
	release, err := s.Hold("a")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = s.Hold("b")
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("a second Hold = %v, want ErrHeld naming %s", err, s.Path())
	}
}
