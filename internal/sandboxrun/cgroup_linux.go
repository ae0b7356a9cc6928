//go:build linux

package sandboxrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupMount is where the cgroup v2 hierarchy must be mounted for the cgroup mode.
const cgroupMount = "/sys/fs/cgroup"

// cgroupDrainTimeout bounds how long teardown waits for a killed cgroup to become empty, and then
// for its removal to succeed.
const cgroupDrainTimeout = 2 * time.Second

// cgroupSeq numbers the cgroups this process creates, so concurrent runs never share one.
var cgroupSeq atomic.Uint64

// cgroup is a fresh cgroup v2 created for one run, below the caller's own cgroup.
type cgroup struct {
	dir string
	fd  int // open O_DIRECTORY descriptor for CLONE_INTO_CGROUP; -1 once closed
}

// cgroupStats is what a cgroup measured over a run.
type cgroupStats struct {
	peakBytes int64 // memory.peak
	peakOK    bool
	cpu       time.Duration // cpu.stat usage_usec
	cpuOK     bool
	oomKills  int64 // memory.events oom_kill (hierarchical)
}

// newCgroup creates a cgroup for one run below the caller's own cgroup v2, with memory.max set to
// limit (bytes; 0 = "max"). It returns an error, and leaves nothing behind, whenever the cgroup
// mode is not usable here: /sys/fs/cgroup is not a cgroup2 mount (cgroup v1 or hybrid hosts), the
// caller's cgroup lacks the memory controller or may not enable it for children (EBUSY in a
// non-root cgroup that holds processes, EACCES/EROFS without delegation), or the kernel lacks
// memory.peak (before Linux 5.19). Run treats every such error as "use the rusage mode".
func newCgroup(limit int64) (*cgroup, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(cgroupMount, &st); err != nil {
		return nil, fmt.Errorf("cgroup: statfs %s: %w", cgroupMount, err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("cgroup: %s is not a cgroup2 mount (filesystem type %#x): cgroup v1 or hybrid host", cgroupMount, st.Type)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	rel, err := parseSelfCgroup(self)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return createCgroup(filepath.Join(cgroupMount, rel), limit)
}

// createCgroup makes the run's cgroup below parent (the caller's own cgroup directory), enabling
// the memory controller for parent's children first if needed. See newCgroup.
func createCgroup(parent string, limit int64) (*cgroup, error) {
	ctrls, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if !hasWord(ctrls, "memory") {
		return nil, fmt.Errorf("cgroup: memory controller not available in %s (controllers %q)", parent, ctrls)
	}
	sub, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if !hasWord(sub, "memory") {
		if err := writeControl(filepath.Join(parent, "cgroup.subtree_control"), "+memory"); err != nil {
			return nil, fmt.Errorf("cgroup: enable memory for children of %s: %w", parent, err)
		}
	}
	dir := filepath.Join(parent, fmt.Sprintf("gymtrace-sandboxrun-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	c := &cgroup{dir: dir, fd: -1}
	if err := c.configure(limit); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// configure checks the new cgroup's memory files, sets its limit and opens its descriptor.
func (c *cgroup) configure(limit int64) error {
	if _, err := os.Stat(filepath.Join(c.dir, "memory.peak")); err != nil {
		return fmt.Errorf("cgroup: memory.peak unavailable (Linux 5.19+ needed): %w", err)
	}
	memMax := "max"
	if limit > 0 {
		memMax = strconv.FormatInt(limit, 10)
	}
	if err := writeControl(filepath.Join(c.dir, "memory.max"), memMax); err != nil {
		return fmt.Errorf("cgroup: set memory.max %s: %w", memMax, err)
	}
	if limit > 0 {
		// Without swap accounting the file is absent and swap cannot bypass the limit anyway.
		err := writeControl(filepath.Join(c.dir, "memory.swap.max"), "0")
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup: set memory.swap.max 0: %w", err)
		}
	}
	fd, err := unix.Open(c.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cgroup: open %s: %w", c.dir, err)
	}
	c.fd = fd
	return nil
}

// closeFD closes the descriptor once the command has been started in the cgroup.
func (c *cgroup) closeFD() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

// kill sends SIGKILL to every process in the cgroup: through cgroup.kill (Linux 5.14+), else to
// each pid listed in cgroup.procs.
func (c *cgroup) kill() {
	err := writeControl(filepath.Join(c.dir, "cgroup.kill"), "1")
	if err == nil {
		return
	}
	procs, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return
	}
	pids, err := parseChildren(procs) // same shape: whitespace-separated pids
	if err != nil {
		return
	}
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// drain kills what is left in the cgroup and waits, up to cgroupDrainTimeout, for it to be empty
// (cgroup.events "populated 0"), so its statistics are final and it can be removed.
func (c *cgroup) drain() {
	deadline := time.Now().Add(cgroupDrainTimeout)
	for {
		b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
		if err != nil {
			return
		}
		if n, ok, err := parseFlatKeyed(b, "populated"); err != nil || !ok || n == 0 || time.Now().After(deadline) {
			return
		}
		c.kill()
		time.Sleep(5 * time.Millisecond)
	}
}

// stats reads memory.peak, cpu.stat usage_usec and memory.events oom_kill. A value that cannot be
// read is marked not OK (oom_kill reads as 0).
func (c *cgroup) stats() cgroupStats {
	var s cgroupStats
	if b, err := os.ReadFile(filepath.Join(c.dir, "memory.peak")); err == nil {
		if n, err := parseSingleValue(b); err == nil {
			s.peakBytes, s.peakOK = n, true
		}
	}
	if b, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat")); err == nil {
		if n, ok, err := parseFlatKeyed(b, "usage_usec"); err == nil && ok {
			s.cpu, s.cpuOK = time.Duration(n)*time.Microsecond, true
		}
	}
	if b, err := os.ReadFile(filepath.Join(c.dir, "memory.events")); err == nil {
		if n, ok, err := parseFlatKeyed(b, "oom_kill"); err == nil && ok {
			s.oomKills = n
		}
	}
	return s
}

// remove closes the descriptor and removes the cgroup directory, retrying while the kernel still
// reports it busy (processes exiting), up to cgroupDrainTimeout. A cgroup that cannot be removed is
// left behind; the run's result does not depend on it.
func (c *cgroup) remove() {
	c.closeFD()
	deadline := time.Now().Add(cgroupDrainTimeout)
	for {
		err := unix.Rmdir(c.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeControl writes value to an existing cgroup control file (never creating it).
func writeControl(name, value string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(value)
	return errors.Join(werr, f.Close())
}
