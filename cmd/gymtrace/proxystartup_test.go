package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestProbeWritable(t *testing.T) {
	t.Run("writable: no file left behind", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, probeWritable(dir))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
	})
	t.Run("missing directory named", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "gone")
		assert.ErrorContains(t, probeWritable(dir), dir)
	})
	t.Run("read-only file system named", func(t *testing.T) {
		mnt := filepath.Join(t.TempDir(), "ro")
		require.NoError(t, os.Mkdir(mnt, 0o700))
		if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_RDONLY, "size=64k"); err != nil {
			t.Logf("variant not run: cannot mount a read-only tmpfs here (%v)", err)
			return
		}
		t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
		err := probeWritable(mnt)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not writable")
	})
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 1}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 1}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 1}, false},
		{&net.UnixAddr{Name: "/tmp/x"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, isLoopback(tt.addr), tt.addr.String())
	}
}
