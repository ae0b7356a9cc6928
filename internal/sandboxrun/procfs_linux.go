//go:build linux

package sandboxrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
)

// This file parses the small text files of procfs and cgroupfs that Run reads. Every parser takes
// the file's bytes, never panics, and returns an error naming the bad value and the rule.

// procStatus is what the sampler needs from /proc/<pid>/status.
type procStatus struct {
	ppid     int   // PPid: the parent's pid
	rssBytes int64 // VmRSS: resident memory now, in bytes (0 for a zombie, which has no Vm lines)
	hwmBytes int64 // VmHWM: resident high-water mark of the address space since its exec, in bytes
}

// parseProcStatus reads PPid, VmRSS and VmHWM from the contents of /proc/<pid>/status ("Key:\tvalue"
// lines, memory values as "<n> kB" where kB means KiB). Missing keys read as 0; a present key with a
// malformed value is an error.
func parseProcStatus(b []byte) (procStatus, error) {
	var st procStatus
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var err error
		switch string(key) {
		case "PPid":
			var n int64
			n, err = parseNonNegative(bytes.TrimSpace(val))
			if err == nil && n > math.MaxInt32 {
				err = fmt.Errorf("%d is above the largest pid", n)
			}
			st.ppid = int(n)
		case "VmRSS":
			st.rssBytes, err = parseKiB(val)
		case "VmHWM":
			st.hwmBytes, err = parseKiB(val)
		default:
			continue
		}
		if err != nil {
			return procStatus{}, fmt.Errorf("proc status %s: %w", key, err)
		}
	}
	return st, nil
}

// parseKiB parses a procfs memory value "   1234 kB" into bytes.
func parseKiB(val []byte) (int64, error) {
	num, ok := bytes.CutSuffix(bytes.TrimSpace(val), []byte(" kB"))
	if !ok {
		return 0, fmt.Errorf("value %q must be \"<n> kB\"", val)
	}
	n, err := parseNonNegative(bytes.TrimSpace(num))
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64/1024 {
		return 0, fmt.Errorf("value %d kB overflows a byte count", n)
	}
	return n * 1024, nil
}

// parseNonNegative parses a decimal integer ≥ 0 without sign or spaces.
func parseNonNegative(b []byte) (int64, error) {
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return 0, fmt.Errorf("value %q must be a non-negative decimal integer", b)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q must be a non-negative decimal integer: %w", b, err)
	}
	return n, nil
}

// parseChildren parses /proc/<pid>/task/<tid>/children: pids separated by spaces.
func parseChildren(b []byte) ([]int, error) {
	fields := bytes.Fields(b)
	pids := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := parseNonNegative(f)
		if err != nil || n == 0 || n > math.MaxInt32 {
			return nil, fmt.Errorf("proc children: %q is not a pid (a decimal integer from 1 to %d)", f, math.MaxInt32)
		}
		pids = append(pids, int(n))
	}
	return pids, nil
}

// parseSelfCgroup returns the cgroup v2 path of the process from the contents of /proc/self/cgroup:
// the path of its "0::<path>" line. It is an error when there is no such line (a pure cgroup v1
// host) or when the path is not absolute and clean: "/.." paths appear when the cgroup is outside
// the reader's cgroup namespace and cannot be found under the mount.
func parseSelfCgroup(b []byte) (string, error) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		p, ok := bytes.CutPrefix(line, []byte("0::"))
		if !ok {
			continue
		}
		s := string(p)
		if s == "" || s[0] != '/' || path.Clean(s) != s {
			return "", fmt.Errorf("cgroup v2 path %q must be absolute and clean (outside our cgroup namespace?)", s)
		}
		return s, nil
	}
	return "", errors.New("no cgroup v2 entry (a \"0::<path>\" line) in /proc/self/cgroup")
}

// parseFlatKeyed returns the value of key in a cgroup flat-keyed file ("key value" lines such as
// memory.events or cpu.stat) and whether the key was present.
func parseFlatKeyed(b []byte, key string) (int64, bool, error) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		k, v, ok := bytes.Cut(line, []byte{' '})
		if !ok || string(k) != key {
			continue
		}
		n, err := parseNonNegative(bytes.TrimSpace(v))
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", key, err)
		}
		return n, true, nil
	}
	return 0, false, nil
}

// parseSingleValue parses a cgroup file that holds one non-negative integer and a newline
// (memory.peak).
func parseSingleValue(b []byte) (int64, error) {
	return parseNonNegative(bytes.TrimSpace(b))
}

// hasWord reports whether the space-separated list b (cgroup.controllers,
// cgroup.subtree_control) contains w.
func hasWord(b []byte, w string) bool {
	return slices.ContainsFunc(bytes.Fields(b), func(f []byte) bool { return string(f) == w })
}

// readFileInto reads the whole file at name into buf (reusing its capacity) and returns the
// bytes read. procfs files report size 0, so it reads until EOF.
func readFileInto(name string, buf []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
