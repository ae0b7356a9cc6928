//go:build linux

package sandboxrun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateCgroupUnusable checks that every way a cgroup directory can be unusable is an error that
// names the reason and leaves nothing behind (Run then falls back to the rusage mode). A temporary
// directory stands in for the caller's cgroup: its files are plain files, so the step that needs the
// kernel (memory.peak appearing in a new cgroup) always fails there.
func TestCreateCgroupUnusable(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // files in the stand-in parent cgroup
		wantErr string
		wantSub string // cgroup.subtree_control afterwards, when it exists
	}{
		{
			name:    "no cgroup.controllers",
			files:   map[string]string{},
			wantErr: "cgroup.controllers",
		},
		{
			name:    "memory controller not offered",
			files:   map[string]string{"cgroup.controllers": "cpu io pids\n", "cgroup.subtree_control": ""},
			wantErr: "memory controller not available",
			wantSub: "",
		},
		{
			name:    "no cgroup.subtree_control",
			files:   map[string]string{"cgroup.controllers": "cpu memory\n"},
			wantErr: "cgroup.subtree_control",
		},
		{
			name:    "memory enabled for children, but the new cgroup has no memory.peak",
			files:   map[string]string{"cgroup.controllers": "cpu memory\n", "cgroup.subtree_control": "memory\n"},
			wantErr: "memory.peak unavailable",
			wantSub: "memory\n",
		},
		{
			name:    "memory gets enabled for children first",
			files:   map[string]string{"cgroup.controllers": "cpu memory\n", "cgroup.subtree_control": "cpu\n"},
			wantErr: "memory.peak unavailable",
			wantSub: "+memory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			for name, content := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(parent, name), []byte(content), 0o644))
			}
			cg, err := createCgroup(parent, 32<<20)
			assert.Nil(t, cg)
			assert.ErrorContains(t, err, tt.wantErr)
			entries, err := os.ReadDir(parent)
			require.NoError(t, err)
			assert.Len(t, entries, len(tt.files), "nothing left behind")
			if _, ok := tt.files["cgroup.subtree_control"]; ok {
				b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
				require.NoError(t, err)
				assert.Equal(t, tt.wantSub, string(b))
			}
		})
	}
}

func TestWriteControlNeverCreates(t *testing.T) {
	dir := t.TempDir()
	err := writeControl(filepath.Join(dir, "memory.max"), "max")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, statErr := os.Stat(filepath.Join(dir, "memory.max"))
	assert.ErrorIs(t, statErr, os.ErrNotExist)

	name := filepath.Join(dir, "memory.swap.max")
	require.NoError(t, os.WriteFile(name, []byte("max\n"), 0o644))
	require.NoError(t, writeControl(name, "0"))
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "0", string(b))
}

// TestCgroupModeHere logs which measuring mode this machine gives Run, and checks that when the
// cgroup mode is refused, the refusal is one of the documented reasons.
func TestCgroupModeHere(t *testing.T) {
	cg, err := newCgroup(0)
	if err == nil {
		t.Logf("cgroup v2 mode usable here: %s", cg.dir)
		cg.remove()
		_, statErr := os.Stat(cg.dir)
		assert.ErrorIs(t, statErr, os.ErrNotExist, "the probe cgroup was removed")
		return
	}
	t.Logf("cgroup v2 mode not usable here, Run uses the rusage mode: %v", err)
	assert.ErrorContains(t, err, "cgroup: ")
}
