package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, 100 on every Linux
// architecture Go supports.
const clockTick = 10 * time.Millisecond

// procCPU returns the CPU time (user + system, all threads) process pid has used so far, read from
// /proc/<pid>/stat, in clockTick resolution.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: cpu of %d: %w", pid, err)
	}
	return parseProcStatCPU(b)
}

// parseProcStatCPU reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are counted after its last ')'.
func parseProcStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: /proc stat line %q has no command name", b)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc stat line has %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bench: /proc stat cpu field %q is not a tick count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// procPeakRSS returns the peak resident set size of process pid in bytes (VmHWM of
// /proc/<pid>/status).
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: peak rss of %d: %w", pid, err)
	}
	return parseVmHWM(b)
}

// parseVmHWM reads the "VmHWM:   1234 kB" line of a /proc/<pid>/status text, in bytes.
func parseVmHWM(b []byte) (int64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("bench: VmHWM line %q, want \"VmHWM: N kB\"", line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bench: VmHWM line %q, want \"VmHWM: N kB\"", line)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("bench: no VmHWM line in /proc status")
}

// selfCPU returns the CPU time (user + system) this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage returns the 1, 5 and 15 minute load averages of /proc/loadavg (zeros when unknown).
func loadAverage() [3]float64 {
	var out [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}
