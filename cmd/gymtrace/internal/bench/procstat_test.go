package bench

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    time.Duration
		wantErr string
	}{
		{"plain", "1234 (gymtrace) S 1 1234 1234 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 8 0 100 0 0", 1750 * time.Millisecond, ""},
		{"name with spaces and parens", "77 (a) b (c) R 1 2 3 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1", 70 * time.Millisecond, ""},
		{"no name", "1234 gymtrace S 1", 0, "has no command name"},
		{"short", "1 (x) S 1 2 3", 0, "want at least 13"},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 4 0", 0, `"abc" is not a tick count`},
		{"negative", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -5 4 0", 0, `"-5" is not a tick count`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStatCPU([]byte(tc.line))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr string
	}{
		{"present", "Name:\tgymtrace\nVmPeak:\t  999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1000 kB\n", 2048 << 10, ""},
		{"missing", "Name:\tgymtrace\n", 0, "no VmHWM line"},
		{"bad unit", "VmHWM:\t 12 MB\n", 0, `want "VmHWM: N kB"`},
		{"bad number", "VmHWM:\t x kB\n", 0, `want "VmHWM: N kB"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVmHWM([]byte(tc.status))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestProcSelf reads this process's own entries: the parsers fit the running kernel's format.
func TestProcSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Fatalf("bench measures children through /proc, which this system lacks: %v", err)
	}
	busy := time.Now()
	for time.Since(busy) < 50*time.Millisecond {
	}
	cpu, err := procCPU(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, cpu)
	rss, err := procPeakRSS(os.Getpid())
	require.NoError(t, err)
	assert.Greater(t, rss, int64(1<<20))
	assert.Positive(t, selfCPU())
	_, err = procCPU(-1)
	assert.Error(t, err)
}
