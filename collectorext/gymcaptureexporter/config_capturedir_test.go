package gymcaptureexporter

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigValidateCaptureDir: Validate refuses the capture_dir values Start could not use
// (a NUL byte, an existing file that is not a directory, a path under such a file) with the key,
// the value and the rule, and accepts a directory that does not exist yet.
func TestConfigValidateCaptureDir(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	require.NoError(t, os.WriteFile(at("file"), nil, 0o600))
	require.NoError(t, os.Mkdir(at("dir"), 0o700))
	require.NoError(t, os.Symlink(at("dir"), at("link-to-dir")))
	require.NoError(t, os.Symlink(at("file"), at("link-to-file")))
	require.NoError(t, syscall.Mkfifo(at("fifo"), 0o600))
	l, err := net.Listen("unix", at("sock"))
	require.NoError(t, err)
	defer l.Close()

	tests := []struct {
		name string
		dir  string
		want string // the error's text; "": accepted
	}{
		{name: "NUL byte", dir: "/srv/cap\x00tures", want: `capture_dir: "/srv/cap\x00tures" must not contain a NUL byte (no path can hold one)`},
		{name: "regular file", dir: at("file"), want: `capture_dir: "` + at("file") + `" exists and is a regular file, not a directory`},
		{name: "symbolic link to a regular file", dir: at("link-to-file"), want: `capture_dir: "` + at("link-to-file") + `" exists and is a regular file, not a directory`},
		{name: "FIFO", dir: at("fifo"), want: `capture_dir: "` + at("fifo") + `" exists and is a FIFO, not a directory`},
		{name: "socket", dir: at("sock"), want: `capture_dir: "` + at("sock") + `" exists and is a socket, not a directory`},
		{name: "device", dir: "/dev/null", want: `capture_dir: "/dev/null" exists and is a device, not a directory`},
		{name: "under a regular file", dir: at("file/captures/x"), want: `capture_dir: "` + at("file/captures/x") + `" is under "` + at("file") + `", which is a regular file, not a directory`},
		{name: "trailing slash on a regular file", dir: at("file") + "/", want: `capture_dir: "` + at("file") + `/" exists and is a regular file, not a directory`},
		{name: "existing directory", dir: at("dir")},
		{name: "symbolic link to a directory", dir: at("link-to-dir")},
		{name: "missing directory", dir: at("dir/a/b")},
		{name: "missing top-level directory (another host's)", dir: "/gymtrace-validate-test-missing/captures"},
		{name: "root", dir: "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.CaptureDir = tt.dir
			err := cfg.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}
