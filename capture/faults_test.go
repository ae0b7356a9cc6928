package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a fresh tmpfs of the given options at a new directory and unmounts it at cleanup.
// It returns "" and the reason when this process cannot mount one (not root, no CAP_SYS_ADMIN, a
// container without mount rights): the caller then logs why its tmpfs variant is not run.
func mountTmpfs(t *testing.T, opts string) (dir, whyNot string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "tmpfs")
	require.NoError(t, os.Mkdir(dir, 0o700))
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return "", "mount -t tmpfs -o " + opts + ": " + err.Error()
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir, ""
}

// A disk that fills up during a commit (short write, then ENOSPC, injected through WithWriteHook):
// every Append of the batch fails with ENOSPC, the bytes that reached the file are cut back, the
// file is exactly as before, and the next append succeeds.
func TestAppendWriteFaultCutsBack(t *testing.T) {
	const torn = `{"model_call_id":"x","dia`
	tests := []struct {
		name      string
		seed      string
		keep      func(size int) int // bytes the "disk" accepts before ENOSPC
		wantAfter string             // file after the next, successful append
	}{
		{name: "nothing written", seed: testLine, keep: func(int) int { return 0 }, wantAfter: testLine + testLine},
		{name: "half the line written", seed: testLine, keep: func(n int) int { return n / 2 }, wantAfter: testLine + testLine},
		{name: "all but the newline written", seed: testLine, keep: func(n int) int { return n - 1 }, wantAfter: testLine + testLine},
		{name: "whole line written, error anyway", seed: testLine, keep: func(n int) int { return n + 10 }, wantAfter: testLine + testLine},
		{name: "negative count", seed: "", keep: func(int) int { return -5 }, wantAfter: testLine},
		{name: "D7 repair newline written, then full", seed: torn, keep: func(int) int { return 1 }, wantAfter: torn + "\n" + testLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fail atomic.Bool
			var sizes []int
			s := newTestStore(t, WithWriteHook(func(path string, size int) (int, error) {
				assert.True(t, strings.HasSuffix(path, "r"+CaptureFileSuffix), path)
				sizes = append(sizes, size)
				if fail.Load() {
					return tt.keep(size), unix.ENOSPC
				}
				return 0, nil
			}))
			path, err := s.CapturePath("r")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, []byte(tt.seed), 0o600))

			fail.Store(true)
			err = s.Append(t.Context(), "r", []byte(testLine))
			require.ErrorIs(t, err, unix.ENOSPC)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Equal(t, tt.seed, readFile(t, path), "the partial write was cut back")

			fail.Store(false)
			mustAppend(t, s, "r", testLine)
			assert.Equal(t, tt.wantAfter, readFile(t, path))
			wantSize := len(testLine)
			if tt.seed == torn {
				wantSize++ // the repair newline
			}
			assert.Equal(t, []int{wantSize, wantSize}, sizes, "the hook sees the commit's byte count")
			lines, invalid, err := s.ReadAvailable("r")
			require.NoError(t, err)
			wantInvalid := 0
			if tt.seed == torn {
				wantInvalid = 1
			}
			assert.Equal(t, wantInvalid, invalid)
			assert.Equal(t, `{"a":1}`, string(lines[len(lines)-1].Line))
		})
	}
}

// A real full file system (a tmpfs of 64 KiB): the append fails with ENOSPC, nothing partial stays in
// the file, the incomplete marker can still be created (it needs an inode, not a data block), and
// once space is freed the next append succeeds.
func TestAppendFullFileSystem(t *testing.T) {
	dir, whyNot := mountTmpfs(t, "size=64k,mode=0700")
	if whyNot != "" {
		t.Logf("tmpfs variant not run: %s (the injected ENOSPC of TestAppendWriteFaultCutsBack covers the same path)", whyNot)
		return
	}
	s, err := NewStore(filepath.Join(dir, "caps"))
	require.NoError(t, err)
	mustAppend(t, s, "full", testLine)
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	require.NoError(t, err)
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			require.ErrorIs(t, err, unix.ENOSPC)
			break
		}
	}
	require.NoError(t, f.Close())

	big := `{"pad":"` + strings.Repeat("x", 16<<10) + `"}` + "\n"
	err = s.Append(t.Context(), "full", []byte(big))
	require.ErrorIs(t, err, unix.ENOSPC)
	path, _ := s.CapturePath("full")
	assert.Equal(t, testLine, readFile(t, path), "no partial line left behind")
	require.NoError(t, s.MarkIncomplete("full"), "the marker needs no data block")
	inc, err := s.IsIncomplete("full")
	require.NoError(t, err)
	assert.True(t, inc)

	require.NoError(t, os.Remove(filler))
	mustAppend(t, s, "full", big)
	lines, invalid, err := s.ReadAvailable("full")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, lines, 2)
}

// A file system remounted read-only under a running store: appends and markers fail with EROFS,
// the existing records stay readable.
func TestAppendReadOnlyFileSystem(t *testing.T) {
	dir, whyNot := mountTmpfs(t, "size=1m,mode=0700")
	if whyNot != "" {
		t.Logf("read-only tmpfs variant not run: %s", whyNot)
		return
	}
	s, err := NewStore(filepath.Join(dir, "caps"))
	require.NoError(t, err)
	mustAppend(t, s, "ro", testLine)
	require.NoError(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, "size=1m,mode=0700"))

	err = s.Append(t.Context(), "ro", []byte(testLine))
	require.ErrorIs(t, err, unix.EROFS)
	err = s.MarkIncomplete("ro")
	require.True(t, errors.Is(err, unix.EROFS), "marker: %v", err)
	rows, err := s.Read("ro")
	require.NoError(t, err)
	assert.Len(t, rows, 1)
}
