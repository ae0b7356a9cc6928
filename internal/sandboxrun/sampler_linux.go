//go:build linux

package sandboxrun

import (
	"os"
	"strconv"
	"time"
)

// sampleInterval is how often the rusage mode samples the command's processes: the resolution of
// its peak-memory samples and the window in which the watchdog can let memory overshoot a limit.
const sampleInterval = 10 * time.Millisecond

// walkEvery is how many samples apart the sampler rediscovers the process tree: reading every
// thread's children file costs several times more than reading the known processes' status, so
// descendants are found every walkEvery*sampleInterval (100 ms) and measured every sample.
const walkEvery = 10

// maxSampledProcs bounds how many processes of one command a sample reads, so a fork bomb cannot
// make the sampler itself unbounded.
const maxSampledProcs = 4096

// sampler reads, every sampleInterval, the resident memory (VmRSS) and resident high-water mark
// (VmHWM) of a command and its descendants from procfs, keeps the largest values seen, and, when a
// limit is set, reports the first sample over it on over. It finds the process tree through
// /proc/<pid>/task/<tid>/children every walkEvery samples (a descendant whose parent already exited
// is no longer reachable).
// Start it with startSampler right after the command started and stop it with finish before the
// command is reaped, so its pid cannot be reused while it is read.
type sampler struct {
	procRoot string
	pid      int
	limit    int64 // bytes; 0 means none
	over     chan struct{}
	stop     chan struct{}
	done     chan struct{}

	// Owned by the sampling goroutine until done is closed.
	peakHWM int64  // largest VmHWM of one process, bytes
	peakSum int64  // largest sum of VmRSS over the processes of one sample, bytes
	tree    []node // the processes the last walk found, the command first
	buf     []byte
}

// startSampler takes a first sample at once and then one every sampleInterval until finish.
func startSampler(procRoot string, pid int, limit int64) *sampler {
	s := &sampler{
		procRoot: procRoot,
		pid:      pid,
		limit:    limit,
		over:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		buf:      make([]byte, 0, 4096),
	}
	go s.loop()
	return s
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(sampleInterval)
	defer t.Stop()
	for n := 0; ; n++ {
		s.sample(n%walkEvery == 0)
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// finish stops the sampler, waits for its goroutine and returns the largest per-process VmHWM and
// the largest summed VmRSS seen, in bytes (0 when no sample found the command alive).
func (s *sampler) finish() (peakHWM, peakSum int64) {
	close(s.stop)
	<-s.done
	return s.peakHWM, s.peakSum
}

// node is one process of the command's tree and the parent it was found under (0 for the command).
type node struct{ pid, parent int }

// sample measures the command's processes once and updates the peaks; over the limit, it signals
// over (once: the channel holds one token and later sends are dropped). With walk it rediscovers
// the process tree through the children files; without, it reads the processes the last walk
// found (a descendant started since is measured from the next walk on). It returns how many
// processes it measured.
func (s *sampler) sample(walk bool) int {
	nodes := s.tree
	var found []node
	if walk {
		nodes = []node{{pid: s.pid}}
	}
	var sum, hwm int64
	measured := 0
	for i := 0; i < len(nodes) && i < maxSampledProcs; i++ {
		cur := nodes[i]
		st, ok := s.status(cur.pid)
		if !ok || (cur.parent != 0 && st.ppid != cur.parent) {
			continue // gone, or its pid was reused by a process that is not its parent's child
		}
		measured++
		sum += st.rssBytes
		hwm = max(hwm, st.hwmBytes)
		if walk {
			found = append(found, cur)
			for _, c := range s.children(cur.pid) {
				nodes = append(nodes, node{pid: c, parent: cur.pid})
			}
		}
	}
	if walk {
		s.tree = found
	}
	s.peakHWM = max(s.peakHWM, hwm)
	s.peakSum = max(s.peakSum, sum)
	if s.limit > 0 && (sum > s.limit || hwm > s.limit) {
		select {
		case s.over <- struct{}{}:
		default:
		}
	}
	return measured
}

// status reads /proc/<pid>/status; ok is false when the process is gone or the file unreadable.
func (s *sampler) status(pid int) (procStatus, bool) {
	var err error
	s.buf, err = readFileInto(s.procRoot+"/"+strconv.Itoa(pid)+"/status", s.buf)
	if err != nil {
		return procStatus{}, false
	}
	st, err := parseProcStatus(s.buf)
	return st, err == nil
}

// children lists the children of every thread of pid; none when unreadable (the process is gone,
// or the kernel lacks CONFIG_PROC_CHILDREN, in which case only the command itself is sampled).
func (s *sampler) children(pid int) []int {
	taskDir := s.procRoot + "/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(taskDir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		var err error
		s.buf, err = readFileInto(taskDir+"/"+t.Name()+"/children", s.buf)
		if err != nil {
			continue
		}
		kids, err := parseChildren(s.buf)
		if err != nil {
			continue
		}
		out = append(out, kids...)
	}
	return out
}
