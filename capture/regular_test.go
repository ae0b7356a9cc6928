package capture

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const testLine = `{"a":1}` + "\n"

// requireNotRegular checks that err refuses path as not a regular file of the given kind, naming the
// path and the rule.
func requireNotRegular(t *testing.T, err error, path, kind string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrNotRegularFile)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, path, pe.Path)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "("+kind+")")
	assert.Contains(t, err.Error(), "must be regular files with one link and symbolic links are never followed")
}

// A symbolic link planted in the capture directory never redirects a write, a marker or a read.
func TestStoreNeverFollowsSymlinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.txt")
	const orig = "outside file\n"
	s := newTestStore(t)
	capPath, _ := s.CapturePath("evil")
	markPath, _ := s.MarkerPath("evil")

	tests := []struct {
		name   string
		target string // link target
		link   string
		run    func() error
	}{
		{name: "append to a linked capture file", target: outside, link: capPath,
			run: func() error { return s.Append(t.Context(), "evil", []byte(testLine)) }},
		{name: "append through a dangling link", target: outside + ".absent", link: capPath,
			run: func() error { return s.Append(t.Context(), "evil", []byte(testLine)) }},
		{name: "mark through a linked marker", target: outside, link: markPath,
			run: func() error { return s.MarkIncomplete("evil") }},
		{name: "mark through a dangling marker link", target: outside + ".absent", link: markPath,
			run: func() error { return s.MarkIncomplete("evil") }},
		{name: "strict read of a linked capture file", target: outside, link: capPath,
			run: func() error { _, err := s.Read("evil"); return err }},
		{name: "tolerant read of a linked capture file", target: outside, link: capPath,
			run: func() error { _, _, err := s.ReadAvailable("evil"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(outside, []byte(orig), 0o600))
			require.NoError(t, os.Symlink(tt.target, tt.link))
			t.Cleanup(func() { _ = os.Remove(tt.link) })

			requireNotRegular(t, tt.run(), tt.link, "a symbolic link")
			assert.Equal(t, orig, readFile(t, outside), "the file outside is untouched")
			_, err := os.Stat(outside + ".absent")
			assert.True(t, os.IsNotExist(err), "no file created at the link target")
			fi, err := os.Lstat(tt.link)
			require.NoError(t, err)
			assert.Equal(t, fs.ModeSymlink, fi.Mode().Type(), "the link is left in place")
		})
	}
}

// Directories, FIFOs and sockets under a capture or marker name are refused, without blocking.
func TestStoreRefusesNonRegularFiles(t *testing.T) {
	s := newTestStore(t)
	capPath, _ := s.CapturePath("odd")
	markPath, _ := s.MarkerPath("odd")
	ops := []struct {
		name string
		path string
		run  func() error
	}{
		{"append", capPath, func() error { return s.Append(t.Context(), "odd", []byte(testLine)) }},
		{"read", capPath, func() error { _, err := s.Read("odd"); return err }},
		{"mark", markPath, func() error { return s.MarkIncomplete("odd") }},
	}
	kinds := []struct {
		kind string
		make func(path string) error
	}{
		{"a FIFO", func(p string) error { return unix.Mkfifo(p, 0o600) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
	}
	for _, k := range kinds {
		for _, op := range ops {
			t.Run(op.name+" "+k.kind, func(t *testing.T) {
				require.NoError(t, k.make(op.path))
				t.Cleanup(func() { _ = os.Remove(op.path) })
				done := make(chan error, 1)
				go func() { done <- op.run() }()
				select {
				case err := <-done:
					requireNotRegular(t, err, op.path, k.kind)
				case <-time.After(5 * time.Second):
					// Unblock the open so the goroutine ends, then fail.
					if f, err := os.OpenFile(op.path, os.O_RDWR, 0); err == nil {
						_ = f.Close()
					}
					<-done
					t.Fatal("opening a non-regular file blocked")
				}
			})
		}
	}
}

// ClearCount removes a symbolic link itself, never its target, and counts what it removed.
func TestClearCount(t *testing.T) {
	s := newTestStore(t)
	mustAppend(t, s, "both", testLine)
	require.NoError(t, s.MarkIncomplete("both"))
	mustAppend(t, s, "file", testLine)
	require.NoError(t, s.MarkIncomplete("marker"))
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("keep\n"), 0o600))
	link, _ := s.CapturePath("link")
	require.NoError(t, os.Symlink(outside, link))

	tests := []struct {
		id   string
		want int
	}{
		{"both", 2}, {"file", 1}, {"marker", 1}, {"none", 0}, {"link", 1}, {"both", 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			n, err := s.ClearCount(tt.id)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
			has, err := s.HasCapture(tt.id)
			require.NoError(t, err)
			assert.False(t, has)
		})
	}
	assert.Equal(t, "keep\n", readFile(t, outside), "a link's target is never touched")
}

// The store directory removed while the store is in use is recreated once (with exactly the directory
// mode) and the write goes through; no record is lost.
func TestStoreRecreatesRemovedDirectory(t *testing.T) {
	old := unix.Umask(0o077)
	t.Cleanup(func() { unix.Umask(old) })
	base := t.TempDir()
	dir := filepath.Join(base, "a", "captures")
	tests := []struct {
		name   string
		remove string // what is removed after NewStore
		run    func(s *Store) error
		check  func(t *testing.T, s *Store)
	}{
		{name: "append, directory removed", remove: dir,
			run: func(s *Store) error { return s.Append(t.Context(), "0-0", []byte(testLine)) },
			check: func(t *testing.T, s *Store) {
				lines, err := s.Read("0-0")
				require.NoError(t, err)
				assert.Len(t, lines, 1)
			}},
		{name: "append, parent removed too", remove: filepath.Join(base, "a"),
			run: func(s *Store) error { return s.Append(t.Context(), "0-0", []byte(testLine)) },
			check: func(t *testing.T, s *Store) {
				lines, err := s.Read("0-0")
				require.NoError(t, err)
				assert.Len(t, lines, 1)
			}},
		{name: "marker, directory removed", remove: dir,
			run: func(s *Store) error { return s.MarkIncomplete("0-0") },
			check: func(t *testing.T, s *Store) {
				inc, err := s.IsIncomplete("0-0")
				require.NoError(t, err)
				assert.True(t, inc)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewStore(dir, WithDirMode(0o750), WithFileMode(0o640))
			require.NoError(t, err)
			require.NoError(t, os.RemoveAll(tt.remove))
			require.NoError(t, tt.run(s))
			tt.check(t, s)
			for _, d := range []string{filepath.Join(base, "a"), dir} {
				fi, err := os.Stat(d)
				require.NoError(t, err)
				assert.Equal(t, fs.FileMode(0o750), fi.Mode().Perm(), d)
			}
			require.NoError(t, os.RemoveAll(filepath.Join(base, "a")))
		})
	}
	t.Run("directory that cannot be recreated", func(t *testing.T) {
		// The configured directory is a symbolic link whose target was removed: the open fails with
		// ENOENT, the mkdir cannot replace the link, and the error says so (no endless retry).
		link := filepath.Join(base, "link")
		target := filepath.Join(base, "target")
		require.NoError(t, os.Mkdir(target, 0o700))
		require.NoError(t, os.Symlink(target, link))
		s, err := NewStore(link)
		require.NoError(t, err)
		require.NoError(t, os.Remove(target))
		err = s.Append(t.Context(), "0-0", []byte(testLine))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "recreate the removed capture directory")
		assert.Contains(t, err.Error(), link)
		err = s.MarkIncomplete("0-0")
		require.ErrorContains(t, err, "recreate the removed capture directory")
	})
}

func TestValidateModes(t *testing.T) {
	tests := []struct {
		name    string
		dir     bool
		mode    fs.FileMode
		wantErr string
	}{
		{name: "dir 0700", dir: true, mode: 0o700},
		{name: "dir 0777", dir: true, mode: 0o777},
		{name: "dir 0", dir: true, mode: 0, wantErr: "directory mode 0000 (----------) must include owner rwx (0700)"},
		{name: "dir 0600", dir: true, mode: 0o600, wantErr: "directory mode 0600 (-rw-------) must include owner rwx (0700)"},
		{name: "dir setgid", dir: true, mode: 0o750 | fs.ModeSetgid, wantErr: "directory mode 0750 (grwxr-x---) must hold permission bits only"},
		{name: "dir type bit", dir: true, mode: 0o700 | fs.ModeDir, wantErr: "must hold permission bits only"},
		{name: "file 0600", mode: 0o600},
		{name: "file 0777", mode: 0o777},
		{name: "file 0400", mode: 0o400, wantErr: "file mode 0400 (-r--------) must include owner rw (0600)"},
		{name: "file 0", mode: 0, wantErr: "file mode 0000 (----------) must include owner rw (0600)"},
		{name: "file setuid", mode: 0o600 | fs.ModeSetuid, wantErr: "no setuid, setgid, sticky or type bits"},
		{name: "file sticky", mode: 0o600 | fs.ModeSticky, wantErr: "file mode 0600 (trw-------) must hold permission bits only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			validate := ValidateFileMode
			if tt.dir {
				validate = ValidateDirMode
			}
			err := validate(tt.mode)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// Modes are applied exactly, whatever the umask; invalid modes are refused before anything is created.
func TestStoreModesAreExact(t *testing.T) {
	old := unix.Umask(0o077)
	t.Cleanup(func() { unix.Umask(old) })
	t.Run("umask does not narrow", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new", "caps")
		s, err := NewStore(dir, WithDirMode(0o755), WithFileMode(0o644))
		require.NoError(t, err)
		for _, d := range []string{filepath.Dir(dir), dir} {
			fi, err := os.Stat(d)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm(), d)
		}
		mustAppend(t, s, "0-0", testLine)
		require.NoError(t, s.MarkIncomplete("0-0"))
		for _, id := range []string{"0-0.capture.jsonl", "0-0.capture.incomplete"} {
			fi, err := os.Stat(filepath.Join(dir, id))
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm(), id)
		}
	})
	t.Run("0777 stays 0777", func(t *testing.T) {
		unix.Umask(0o022)
		defer unix.Umask(0o077)
		s, err := NewStore(filepath.Join(t.TempDir(), "c"), WithFileMode(0o777))
		require.NoError(t, err)
		mustAppend(t, s, "x", testLine)
		p, _ := s.CapturePath("x")
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o777), fi.Mode().Perm())
	})
	t.Run("existing files and directories keep their mode", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o711))
		p := filepath.Join(dir, "x.capture.jsonl")
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		require.NoError(t, os.Chmod(p, 0o604))
		s, err := NewStore(dir, WithDirMode(0o700), WithFileMode(0o600))
		require.NoError(t, err)
		mustAppend(t, s, "x", testLine)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o604), fi.Mode().Perm())
		fi, err = os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o711), fi.Mode().Perm())
	})
	t.Run("invalid modes refused before mkdir", func(t *testing.T) {
		for _, opt := range []StoreOption{WithDirMode(0), WithDirMode(0o4700), WithFileMode(0o200), WithDirMode(0o700 | fs.ModeSetuid)} {
			dir := filepath.Join(t.TempDir(), "never")
			_, err := NewStore(dir, opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "mode")
			_, err = os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "nothing created")
		}
	})
}
