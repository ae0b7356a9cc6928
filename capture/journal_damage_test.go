package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadJournal leaves a crashed journaled store's journal in dir holding records 1 to n of rollout
// "a", none of them in the rollout file (a machine crash before the background sync), and returns
// its segment's path.
func deadJournal(t *testing.T, dir string, n int) string {
	t.Helper()
	var synced syncedSizes
	s := newJournalStore(t, dir, synced.option())
	for v := 1; v <= n; v++ {
		mustAppend(t, s, "a", string(recordLine(0, v)))
	}
	seg := s.journal.cur.path
	crashMachine(t, s, &synced)
	return seg
}

// A damaged frame in the middle of a segment costs only its record: the intact records after it
// are recovered and the segment is kept aside, once, with a warning (a user trial lost every
// record after one flipped byte).
func TestJournalRecoveryKeepsDamagedSegments(t *testing.T) {
	dir := t.TempDir()
	seg := deadJournal(t, dir, 5)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	at := bytes.Index(b, recordLine(0, 3))
	require.Positive(t, at)
	b[at+5] ^= 0x01
	require.NoError(t, os.WriteFile(seg, b, 0o600))

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Journals)
	assert.Equal(t, 4, rec.Records)
	assert.Equal(t, 4, rec.Appended)
	assert.Positive(t, rec.DamagedBytes)
	require.Len(t, rec.Kept, 1)
	assert.Contains(t, rec.Kept[0], "4 intact records were recovered")
	assert.Equal(t, rec.Kept, rec.Warnings())
	want := string(recordLine(0, 1)) + string(recordLine(0, 2)) + string(recordLine(0, 4)) + string(recordLine(0, 5))
	assert.Equal(t, want, readFile(t, filepath.Join(dir, "a"+CaptureFileSuffix)))

	root := filepath.Join(dir, JournalDirName)
	owner := filepath.Base(filepath.Dir(seg))
	kept := filepath.Join(root, owner+"-"+strings.TrimSuffix(filepath.Base(seg), journalSegSuffix)+journalKeptSuffix)
	keptBytes, err := os.ReadFile(kept)
	require.NoError(t, err, "the damaged segment is kept")
	assert.Equal(t, b, keptBytes)
	assert.NoDirExists(t, filepath.Dir(seg), "the owner directory is gone")

	again, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{}, again, "a kept segment is left alone, silently")
	assert.FileExists(t, kept)
}

// Entries of the journal directory that no store made are left alone and reported; they never
// keep the journals beside them from being recovered, nor block a reader or a proxy.
func TestJournalRecoverySkipsForeignEntries(t *testing.T) {
	dir := t.TempDir()
	seg := deadJournal(t, dir, 2)
	root := filepath.Join(dir, JournalDirName)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "backup"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "backup", "notes.txt"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "README"), []byte("x"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "vm-1-0123456789abcdef")))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(seg), "stray.txt"), []byte("x"), 0o600))

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, 2, rec.Appended, "the journal beside the foreign entries is recovered")
	require.Len(t, rec.Skipped, 4, "%q", rec.Skipped)
	for _, name := range []string{"backup", "README", "vm-1-0123456789abcdef"} {
		assert.True(t, containsSubstring(rec.Skipped, filepath.Join(root, name)+" alone"), "%s reported: %q", name, rec.Skipped)
	}
	assert.True(t, containsSubstring(rec.Skipped, filepath.Dir(seg)+" in place"), "%q", rec.Skipped)
	assert.FileExists(t, filepath.Join(root, "backup", "notes.txt"))
	assert.FileExists(t, filepath.Join(filepath.Dir(seg), "stray.txt"))
	assert.FileExists(t, filepath.Join(outside, "keep"), "a symbolic link is never followed")
	assert.NoFileExists(t, seg)
}

func containsSubstring(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A journal directory that is a symbolic link is refused, by a recovery and by a journaled store,
// naming it; nothing is written or removed behind it.
func TestJournalDirectorySymlinkRefused(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "h-1-0123456789abcdef"), 0o700))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, JournalDirName)))

	r, err := NewStore(dir)
	require.NoError(t, err)
	_, err = r.RecoverJournals()
	require.ErrorContains(t, err, filepath.Join(dir, JournalDirName)+" is a symbolic link")
	assert.DirExists(t, filepath.Join(elsewhere, "h-1-0123456789abcdef"), "nothing removed behind the link")

	_, err = NewStore(dir, WithDurability(DurabilityJournal))
	require.ErrorContains(t, err, "is a symbolic link")
	des, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Len(t, des, 1, "no journal written behind the link")
}

func TestIsJournalOwnerName(t *testing.T) {
	for name, want := range map[string]bool{
		journalOwnerName():            true,
		"host-12-0123456789abcdef":    true,
		"my-host-12-0123456789abcdef": true,
		"host-12-0123456789ABCDEF":    false,
		"host-x-0123456789abcdef":     false,
		"-12-0123456789abcdef":        false,
		"host-12-0123456789abcde":     false,
		"backup":                      false,
		"host--0123456789abcdef":      false,
	} {
		assert.Equal(t, want, isJournalOwnerName(name), name)
	}
}

// What a second user trial found: a journal of another format version is kept whole and named; an
// owner directory whose lock is no file, and files of an owner directory that are no segments, are
// left alone and reported; a kept segment never replaces what has its name.
func TestJournalRecoveryOddOwners(t *testing.T) {
	recoverDir := func(t *testing.T, dir string) (JournalRecovery, error) {
		r, err := NewStore(dir)
		require.NoError(t, err)
		return r.RecoverJournals()
	}
	t.Run("another format version", func(t *testing.T) {
		dir := t.TempDir()
		seg := deadJournal(t, dir, 1)
		b, err := os.ReadFile(seg)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(seg, append([]byte(journalMagicName+"2\n"), b[len(journalMagic):]...), 0o600))
		_, err = recoverDir(t, dir)
		require.ErrorContains(t, err, `journal format "gymtrace-journal 2"`)
		assert.FileExists(t, seg, "kept whole")
	})
	t.Run("a header cut short is no other version", func(t *testing.T) {
		dir := t.TempDir()
		seg := deadJournal(t, dir, 1)
		require.NoError(t, os.WriteFile(seg, append([]byte(journalMagicName), make([]byte, 4096)...), 0o600))
		rec, err := recoverDir(t, dir)
		require.NoError(t, err, "a segment its writer was creating when it crashed")
		assert.Equal(t, 1, rec.Journals)
		assert.Empty(t, rec.Warnings())
		assert.NoFileExists(t, seg)
	})
	t.Run("a lock that is a directory", func(t *testing.T) {
		dir := t.TempDir()
		owner := filepath.Join(dir, JournalDirName, "h-1-0123456789abcdef")
		require.NoError(t, os.MkdirAll(filepath.Join(owner, journalOwnerLock), 0o700))
		rec, err := recoverDir(t, dir)
		require.NoError(t, err)
		require.Len(t, rec.Skipped, 1)
		assert.Contains(t, rec.Skipped[0], "its lock is not a regular file")
		assert.DirExists(t, filepath.Join(owner, journalOwnerLock))
	})
	t.Run("files that are no segments", func(t *testing.T) {
		dir := t.TempDir()
		seg := deadJournal(t, dir, 2)
		owner := filepath.Dir(seg)
		for _, name := range []string{"5.seg", "abc.seg", "-1.seg", "000000000000000000001.seg"} {
			require.NoError(t, os.WriteFile(filepath.Join(owner, name), []byte("x"), 0o600))
		}
		rec, err := recoverDir(t, dir)
		require.NoError(t, err)
		assert.Equal(t, 2, rec.Appended)
		require.Len(t, rec.Skipped, 1)
		assert.Contains(t, rec.Skipped[0], owner+" in place")
		assert.FileExists(t, filepath.Join(owner, "abc.seg"))
		assert.NoFileExists(t, seg)
	})
	t.Run("a kept name already taken", func(t *testing.T) {
		dir := t.TempDir()
		seg := deadJournal(t, dir, 3)
		b, err := os.ReadFile(seg)
		require.NoError(t, err)
		b[bytes.Index(b, recordLine(0, 2))+5] ^= 1
		require.NoError(t, os.WriteFile(seg, b, 0o600))
		owner := filepath.Dir(seg)
		taken := owner + "-" + strings.TrimSuffix(filepath.Base(seg), journalSegSuffix) + journalKeptSuffix
		require.NoError(t, os.WriteFile(taken, []byte("earlier"), 0o600))
		rec, err := recoverDir(t, dir)
		require.NoError(t, err)
		require.Len(t, rec.Kept, 1)
		assert.Contains(t, rec.Kept[0], "-2"+journalKeptSuffix)
		assert.Equal(t, "earlier", readFile(t, taken), "never replaced")
	})
}

// A segment without one intact frame is kept with a warning that says so, in words that fit
// (a user trial read "its 0 intact records were recovered").
func TestJournalRecoveryAllDamagedSegment(t *testing.T) {
	dir := t.TempDir()
	seg := deadJournal(t, dir, 1)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	end := bytes.Index(b, recordLine(0, 1)) + len(recordLine(0, 1))
	require.Greater(t, end, 13)
	clear(b[:end])
	copy(b, "not a journal")
	require.NoError(t, os.WriteFile(seg, b, 0o600))

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Zero(t, rec.Records)
	require.Len(t, rec.Kept, 1)
	assert.Contains(t, rec.Kept[0], "13 bytes of it were damaged and it holds no intact frame;")
	assert.Contains(t, rec.Kept[0], "; no record could be recovered from it, those the damaged bytes held may be missing")
	assert.NotContains(t, rec.Kept[0], "0 intact")
}

// What a cleanly closed journaled store leaves (its journal directory, with no owner directory in
// it) is only listed by a recovery: no setup lock is taken or created, so a reader without write
// access to the directory can read the store (a user trial's read-only `gymtrace calls` failed).
func TestJournalRecoveryWithoutOwnersTakesNoLock(t *testing.T) {
	dir := t.TempDir()
	s := newJournalStore(t, dir)
	mustAppend(t, s, "a", string(recordLine(0, 1)))
	require.NoError(t, s.Close())
	root := filepath.Join(dir, JournalDirName)
	require.NoError(t, os.Remove(filepath.Join(root, journalSetupLock)))

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{}, rec)
	assert.NoFileExists(t, filepath.Join(root, journalSetupLock), "nothing to replay: no lock file created")

	require.NoError(t, os.WriteFile(filepath.Join(root, "stray"), nil, 0o600))
	rec, err = r.RecoverJournals()
	require.NoError(t, err)
	require.Len(t, rec.Skipped, 1, "a foreign file is still reported")
	assert.NoFileExists(t, filepath.Join(root, journalSetupLock))
}
