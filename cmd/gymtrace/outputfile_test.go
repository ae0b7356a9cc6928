package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputsThatAreNotRegularFiles: attach --output and report --html replace their output with a
// rename, so a symbolic link (e.g. /dev/stdout), a FIFO or a directory there is refused (exit 2)
// and left exactly as it was.
func TestOutputsThatAreNotRegularFiles(t *testing.T) {
	capDir := t.TempDir()
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(`{"_ng_rollout_id":"r1"}`+"\n"), 0o600))
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))

	tests := []struct {
		name string
		args []string
		path string
		want string
	}{
		{name: "attach to a symlink", path: link, want: "is a symbolic link",
			args: []string{"attach", "--capture-dir", capDir, "--input", in, "--output", link}},
		{name: "attach to a fifo", path: fifo, want: "is a named pipe",
			args: []string{"attach", "--capture-dir", capDir, "--input", in, "--output", fifo}},
		{name: "report html to a symlink", path: link, want: "is a symbolic link",
			args: []string{"report", "--capture-dir", capDir, "--html", link}},
		{name: "report html to a directory", path: sub, want: "is a directory",
			args: []string{"report", "--capture-dir", capDir, "--html", sub}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.Lstat(tt.path)
			require.NoError(t, err)
			res := runGymtrace(t, tt.args...)
			assert.Equal(t, 2, res.code, "stderr: %s", res.stderr)
			assert.ErrorContains(t, res.err, tt.want)
			after, err := os.Lstat(tt.path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "left as it was")
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "keep", string(got))
		})
	}
}
