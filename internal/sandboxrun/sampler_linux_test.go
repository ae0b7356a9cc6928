//go:build linux

package sandboxrun

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSamplerSample(t *testing.T) {
	tests := []struct {
		name         string
		pid          int
		limit        int64
		wantMeasured int
		wantOver     bool
	}{
		{"this process, no limit", os.Getpid(), 0, 1, false},
		{"this process, over a 1 MiB limit", os.Getpid(), 1 << 20, 1, true},
		{"this process, under a 1 TiB limit", os.Getpid(), 1 << 40, 1, false},
		{"a pid that does not exist", 1 << 30, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sampler{procRoot: procRoot, pid: tt.pid, limit: tt.limit, over: make(chan struct{}, 1)}
			assert.Equal(t, tt.wantMeasured, s.sample(true))
			if tt.wantMeasured > 0 {
				assert.Positive(t, s.peakHWM)
				assert.Positive(t, s.peakSum)
			} else {
				assert.Zero(t, s.peakHWM)
				assert.Zero(t, s.peakSum)
			}
			assert.Equal(t, tt.wantOver, len(s.over) == 1)
		})
	}
}

// TestSamplerWalksDescendants samples a helper that started a grandchild: both are measured.
func TestSamplerWalksDescendants(t *testing.T) {
	c := helperCmd(t, "spawn", "60000")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)

	s := &sampler{procRoot: procRoot, pid: c.Process.Pid, over: make(chan struct{}, 1)}
	assert.Equal(t, 2, s.sample(true), "the walk finds the helper and its grandchild %d", grandchild)
	assert.Equal(t, 2, s.sample(false), "later samples read the processes the walk found")
	one := &sampler{procRoot: procRoot, pid: grandchild, over: make(chan struct{}, 1)}
	require.Equal(t, 1, one.sample(true))
	assert.Greater(t, s.peakSum, one.peakSum, "the sum covers both processes")
}

func TestSamplerStartFinish(t *testing.T) {
	s := startSampler(procRoot, os.Getpid(), 1<<20)
	<-s.over // the first sample, taken at once, is over 1 MiB
	hwm, sum := s.finish()
	assert.Positive(t, hwm)
	assert.Positive(t, sum)
}

func BenchmarkSamplerSample(b *testing.B) {
	for _, walk := range []bool{true, false} {
		b.Run("walk="+strconv.FormatBool(walk), func(b *testing.B) {
			s := &sampler{procRoot: procRoot, pid: os.Getpid(), over: make(chan struct{}, 1), buf: make([]byte, 0, 4096)}
			s.sample(true)
			b.ReportAllocs()
			for b.Loop() {
				if s.sample(walk) != 1 {
					b.Fatal("this process was not measured")
				}
			}
		})
	}
}
