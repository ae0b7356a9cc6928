package tokens

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreFileModes: the directories and every file the store creates get exactly the modes
// (the capture files' defaults, or the options), whatever the umask.
func TestStoreFileModes(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tt := range []struct {
		name          string
		opts          []StoreOption
		dirMode, mode fs.FileMode
	}{
		{"defaults", nil, DefaultDirMode, DefaultFileMode},
		{"options", []StoreOption{WithDirMode(0o750), WithFileMode(0o644)}, 0o750, 0o644},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			s, err := OpenStore(dir, tt.opts...)
			require.NoError(t, err)
			for _, d := range []string{dir, filepath.Dir(dir)} {
				fi, err := os.Stat(d)
				require.NoError(t, err)
				assert.Equal(t, tt.dirMode, fi.Mode().Perm(), d)
			}
			require.NoError(t, s.BeginCall("r0", "c0"))
			require.NoError(t, s.Append(baseEntry("r0", "c0")))
			require.NoError(t, s.MarkIncomplete("r0", "c1"))
			names := files(t, dir)
			require.Len(t, names, 5)
			for name := range names {
				fi, err := os.Stat(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.Equal(t, tt.mode, fi.Mode().Perm(), name)
			}
		})
	}
}

func TestOpenStoreRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, dir string
		opts      []StoreOption
		want      string
	}{
		{"relative", "tokens", nil, `directory "tokens" must be an absolute path`},
		{"empty", "", nil, "must be an absolute path"},
		{"dir mode without owner rwx", "/tmp/x", []StoreOption{WithDirMode(0o600)}, "owner rwx"},
		{"file mode with setuid", "/tmp/x", []StoreOption{WithFileMode(0o600 | fs.ModeSetuid)}, "permission bits"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenStore(tt.dir, tt.opts...)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := OpenStore(file)
	assert.ErrorContains(t, err, "not a directory")
}

// TestStoreRefusesSymlinks: the store never opens a file through a symbolic link.
func TestStoreRefusesSymlinks(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	require.NoError(t, os.Symlink(target, s.path("r0", LockFileSuffix)))
	assert.Error(t, s.Append(baseEntry("r0", "c0")))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Empty(t, b)
}
