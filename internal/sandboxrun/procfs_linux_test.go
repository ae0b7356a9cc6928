//go:build linux

package sandboxrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusSample is a trimmed /proc/<pid>/status of a live process.
const statusSample = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\n" +
	"PPid:\t17\nTracerPid:\t0\nVmPeak:\t    8052 kB\nVmSize:\t    8052 kB\nVmLck:\t       0 kB\n" +
	"VmHWM:\t   65664 kB\nVmRSS:\t    1024 kB\nRssAnon:\t     128 kB\nThreads:\t1\n"

func TestParseProcStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    procStatus
		wantErr string
	}{
		{"live process", statusSample, procStatus{ppid: 17, rssBytes: 1024 * 1024, hwmBytes: 65664 * 1024}, ""},
		{"zombie has no Vm lines", "Name:\tx\nState:\tZ (zombie)\nPPid:\t1\n", procStatus{ppid: 1}, ""},
		{"empty", "", procStatus{}, ""},
		{"no trailing newline", "VmRSS:\t5 kB", procStatus{rssBytes: 5 * 1024}, ""},
		{"unit missing", "VmRSS:\t5\n", procStatus{}, `VmRSS: value "\t5" must be "<n> kB"`},
		{"negative", "VmHWM:\t-5 kB\n", procStatus{}, "must be a non-negative decimal integer"},
		{"overflow", "VmHWM:\t9223372036854775807 kB\n", procStatus{}, "overflows a byte count"},
		{"bad pid", "PPid:\tabc\n", procStatus{}, "PPid"},
		{"pid too large", "PPid:\t99999999999\n", procStatus{}, "above the largest pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStatus([]byte(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseProcStatusOfThisProcess(t *testing.T) {
	b, err := readFileInto("/proc/self/status", nil)
	require.NoError(t, err)
	st, err := parseProcStatus(b)
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), st.ppid)
	assert.Positive(t, st.rssBytes)
	assert.GreaterOrEqual(t, st.hwmBytes, st.rssBytes, "the high-water mark is at least the current RSS")
}

func TestParseChildren(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{"none", "", []int{}, false},
		{"two", "123 456 ", []int{123, 456}, false},
		{"newline separated (cgroup.procs)", "7\n8\n", []int{7, 8}, false},
		{"zero is not a pid", "0", nil, true},
		{"garbage", "12 x", nil, true},
		{"too large", "4294967296", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChildren([]byte(tt.in))
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseSelfCgroup(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{"unified", "0::/user.slice/session-1.scope\n", "/user.slice/session-1.scope", ""},
		{"namespace root", "0::/\n", "/", ""},
		{"hybrid lists v1 lines too", "4:memory:/x\n1:cpu:/\n0::/\n", "/", ""},
		{"pure v1", "4:memory:/x\n1:cpu:/\n", "", "no cgroup v2 entry"},
		{"outside the namespace", "0::/../../other\n", "", "must be absolute and clean"},
		{"relative", "0::x\n", "", "must be absolute and clean"},
		{"empty path", "0::\n", "", "must be absolute and clean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSelfCgroup([]byte(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseFlatKeyed(t *testing.T) {
	const events = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n"
	const cpuStat = "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"
	tests := []struct {
		name    string
		in, key string
		want    int64
		wantOK  bool
		wantErr bool
	}{
		{"oom_kill, not oom or oom_group_kill", events, "oom_kill", 2, true, false},
		{"cpu usage", cpuStat, "usage_usec", 1500000, true, false},
		{"populated", "populated 1\nfrozen 0\n", "populated", 1, true, false},
		{"absent key", cpuStat, "nr_throttled", 0, false, false},
		{"malformed value", "oom_kill x\n", "oom_kill", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := parseFlatKeyed([]byte(tt.in), tt.key)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseSingleValueAndHasWord(t *testing.T) {
	n, err := parseSingleValue([]byte("73400320\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(73400320), n)
	_, err = parseSingleValue([]byte("max\n"))
	assert.Error(t, err)

	assert.True(t, hasWord([]byte("cpuset cpu io memory pids\n"), "memory"))
	assert.False(t, hasWord([]byte("cpuset cpu io memoryx pids\n"), "memory"))
	assert.False(t, hasWord(nil, "memory"))
}

func TestReadFileInto(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	big := strings.Repeat("x", 10000)
	require.NoError(t, os.WriteFile(name, []byte(big), 0o600))
	got, err := readFileInto(name, make([]byte, 0, 16))
	require.NoError(t, err)
	assert.Equal(t, big, string(got), "grows past the buffer's capacity")
	_, err = readFileInto(filepath.Join(t.TempDir(), "missing"), nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzParseProcStatus(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Add([]byte("VmRSS:\t5 kB"))
	f.Add([]byte("PPid:\t-1\nVmHWM: kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseProcStatus(b)
		if err != nil {
			assert.Equal(t, procStatus{}, st)
			return
		}
		assert.GreaterOrEqual(t, st.ppid, 0)
		assert.GreaterOrEqual(t, st.rssBytes, int64(0))
		assert.GreaterOrEqual(t, st.hwmBytes, int64(0))
		assert.Zero(t, st.rssBytes%1024)
	})
}

func FuzzParseCgroupFiles(f *testing.F) {
	f.Add([]byte("0::/a/b\noom_kill 3\n"))
	f.Add([]byte("1 2 3"))
	f.Add([]byte("0::/../x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := parseSelfCgroup(b); err == nil {
			assert.True(t, strings.HasPrefix(p, "/"))
			assert.Equal(t, filepath.Clean(p), p)
		}
		if n, _, err := parseFlatKeyed(b, "oom_kill"); err == nil {
			assert.GreaterOrEqual(t, n, int64(0))
		}
		if pids, err := parseChildren(b); err == nil {
			for _, p := range pids {
				assert.Positive(t, p)
			}
		}
		_, _ = parseSingleValue(b)
	})
}

func BenchmarkParseProcStatus(b *testing.B) {
	in := []byte(statusSample)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseProcStatus(in); err != nil {
			b.Fatal(err)
		}
	}
}
