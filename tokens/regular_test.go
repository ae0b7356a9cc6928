package tokens

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreRefusesNonRegularFiles: each of a rollout's token files (entries, state, intents,
// incomplete marks, lock) that is a symbolic link (to a readable file outside the store), a FIFO,
// a directory or a hard link is refused by every reader — ReadEntries, IsIncomplete, Inspect (the
// entries file as its EntriesErr), Freeze (attach's finalization) — and every writer, with an
// *fs.PathError naming the path and wrapping ErrNotRegularFile; nothing blocks on the FIFO, the
// link's target is neither read into the result nor written.
func TestStoreRefusesNonRegularFiles(t *testing.T) {
	outside := t.TempDir()
	const secret = "root:x:0:0:root:/root:/bin/bash\n"
	kinds := []struct {
		name, rule string
		make       func(t *testing.T, path string)
	}{
		{"symlink", "a symbolic link", func(t *testing.T, path string) {
			target := filepath.Join(outside, filepath.Base(path))
			require.NoError(t, os.WriteFile(target, []byte(secret), 0o600))
			require.NoError(t, os.Symlink(target, path))
		}},
		{"fifo", "a FIFO", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o600)) }},
		{"directory", "a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o700)) }},
		{"hard link", "a hard link: 2 links", func(t *testing.T, path string) {
			target := filepath.Join(outside, filepath.Base(path)+".hard")
			require.NoError(t, os.WriteFile(target, []byte(secret), 0o600))
			require.NoError(t, os.Link(target, path))
		}},
	}
	ops := []struct {
		name string
		run  func(s *Store) error
	}{
		{"ReadEntries", func(s *Store) error { _, err := s.ReadEntries("r0"); return err }},
		{"IsIncomplete", func(s *Store) error { _, err := s.IsIncomplete("r0"); return err }},
		{"Inspect", func(s *Store) error {
			in, err := s.Inspect("r0")
			if err == nil {
				err = in.EntriesErr
			}
			return err
		}},
		{"Freeze", func(s *Store) error { _, err := s.Freeze("r0"); return err }},
		{"Append", func(s *Store) error { return s.Append(baseEntry("r0", "c9")) }},
		{"BeginCall", func(s *Store) error { return s.BeginCall("r0", "c9") }},
		{"MarkIncomplete", func(s *Store) error { return s.MarkIncomplete("r0", "c9") }},
	}
	// reads says which operations read (or write) the file of each suffix, so must refuse it.
	reads := map[string][]string{
		EntriesFileSuffix:    {"ReadEntries", "Inspect", "Freeze", "Append"},
		StateFileSuffix:      {"IsIncomplete", "Inspect", "Freeze", "Append", "BeginCall", "MarkIncomplete"},
		IntentsFileSuffix:    {"Inspect", "Freeze", "BeginCall"},
		IncompleteFileSuffix: {"Inspect", "MarkIncomplete"},
		LockFileSuffix:       {"ReadEntries", "IsIncomplete", "Inspect", "Freeze", "Append", "BeginCall", "MarkIncomplete"},
	}
	for suffix, opNames := range reads {
		for _, k := range kinds {
			for _, op := range ops {
				if !slices.Contains(opNames, op.name) {
					continue
				}
				t.Run(suffix+"/"+k.name+"/"+op.name, func(t *testing.T) {
					s, err := OpenStore(t.TempDir())
					require.NoError(t, err)
					path := s.path("r0", suffix)
					k.make(t, path)
					before, err := os.Lstat(path)
					require.NoError(t, err)

					done := make(chan error, 1)
					go func() { done <- op.run(s) }()
					select {
					case err = <-done:
					case <-time.After(10 * time.Second):
						require.FailNow(t, "blocked on "+k.name)
					}
					require.Error(t, err)
					assert.ErrorIs(t, err, ErrNotRegularFile)
					var pe *fs.PathError
					require.ErrorAs(t, err, &pe)
					assert.Equal(t, path, pe.Path, "the error names the path")
					assert.ErrorContains(t, err, path+": not a regular file ("+k.rule+"): token capture files must be regular files with one link and symbolic links are never followed")
					assert.NotContains(t, err.Error(), "root:x", "the target is never read")

					after, err := os.Lstat(path)
					require.NoError(t, err)
					assert.Equal(t, before.Mode(), after.Mode(), "left as it is")
					if k.name == "symlink" || k.name == "hard link" {
						target := filepath.Join(outside, filepath.Base(path))
						if k.name == "hard link" {
							target += ".hard"
						}
						b, err := os.ReadFile(target)
						require.NoError(t, err)
						assert.Equal(t, secret, string(b), "the target is never written")
					}
				})
			}
		}
	}
}

// TestOpenRegularErrors: a missing file stays fs.ErrNotExist and an existing one with O_EXCL
// fs.ErrExist (the store's create-or-open loop depends on both), neither wrapping
// ErrNotRegularFile.
func TestOpenRegularErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := openRegular(filepath.Join(dir, "missing"), os.O_RDONLY, 0)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.False(t, errors.Is(err, ErrNotRegularFile))
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
	_, err = openRegular(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	assert.ErrorIs(t, err, fs.ErrExist)
	assert.False(t, errors.Is(err, ErrNotRegularFile))
	b, err := readRegular(path)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
}
