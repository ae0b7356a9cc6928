//go:build unix

package filekind

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestNonRegular: every kind of entry is named as the refusals name it, a link without being
// followed; a regular file, a missing path and a link's regular target give "".
func TestNonRegular(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	require.NoError(t, os.WriteFile(at("file"), nil, 0o600))
	require.NoError(t, os.Symlink(at("file"), at("link")))
	require.NoError(t, os.Mkdir(at("dir"), 0o700))
	require.NoError(t, unix.Mkfifo(at("fifo"), 0o600))
	l, err := net.Listen("unix", at("sock"))
	require.NoError(t, err)
	defer l.Close()

	for name, want := range map[string]string{
		"file": "", "missing": "", "link": "a symbolic link", "dir": "a directory", "fifo": "a FIFO", "sock": "a socket",
	} {
		assert.Equal(t, want, NonRegular(at(name)), name)
	}
	assert.Equal(t, "a device", NonRegular("/dev/null"))
	assert.Equal(t, "a regular file", Of(unix.S_IFREG|0o600))
	assert.Equal(t, "of an unknown type", Of(0))
}
