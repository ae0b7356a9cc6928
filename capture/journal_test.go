package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"golang.org/x/sys/unix"
)

// journalKillEnv makes the test binary a journaled writer that appends until it is killed
// (runJournalKillChild).
const journalKillEnv = "GYMTRACE_CAPTURE_JOURNAL_KILL_DIR"

func newJournalStore(t *testing.T, dir string, opts ...StoreOption) *Store {
	t.Helper()
	s, err := NewStore(dir, append([]StoreOption{WithDurability(DurabilityJournal), WithJournalSyncInterval(time.Hour)}, opts...)...)
	require.NoError(t, err)
	return s
}

// recordLine is record v of rollout r: a line with a model_call_id, as the writer makes.
func recordLine(r, v int) []byte {
	return fmt.Appendf(nil, `{"model_call_id":"%032x","rollout":%d,"v":%d}`+"\n", v, r, v)
}

// countRecords reads every rollout file of dir and returns how often each v occurs; a torn or
// unreadable line fails the test.
func countRecords(t *testing.T, s *Store) map[int]int {
	t.Helper()
	seen := map[int]int{}
	des, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), CaptureFileSuffix)
		if !ok {
			continue
		}
		lines, invalid, err := s.ReadAvailable(id)
		require.NoError(t, err)
		require.Zero(t, invalid, "%s: no torn or unreadable line", de.Name())
		for _, l := range lines {
			var v struct{ V int }
			require.NoError(t, json.Unmarshal(l.Line, &v))
			seen[v.V]++
		}
	}
	return seen
}

// owners lists the journal owner directories of dir.
func owners(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, JournalDirName))
	require.NoError(t, err)
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out
}

func TestParseDurability(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Durability
		err  bool
	}{{"per-record", DurabilityPerRecord, false}, {"journal", DurabilityJournal, false}, {"Journal", 0, true}, {"", 0, true}} {
		d, err := ParseDurability(c.in)
		if c.err {
			require.ErrorContains(t, err, `want "per-record" or "journal"`, c.in)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, d)
		assert.Equal(t, c.in, d.String())
	}
	_, err := NewStore(t.TempDir(), WithDurability(Durability(7)))
	require.ErrorContains(t, err, "unknown durability")
	_, err = NewStore(t.TempDir(), WithJournalSyncInterval(0))
	require.ErrorContains(t, err, "must be positive")
}

// Every cut of a segment keeps exactly the frames before the cut (SPEC §0 D17: torn tails are
// cut); a damaged byte costs only its frame when intact frames follow it.
func TestJournalSegmentTornTail(t *testing.T) {
	seg := []byte(journalMagic)
	var ends []int
	for i := range 3 {
		seg = appendJournalFrame(seg, fmt.Sprintf("r%d%s", i, CaptureFileSuffix), recordLine(i, i))
		ends = append(ends, len(seg))
	}
	for cut := 0; cut <= len(seg); cut++ {
		sc := parseJournalSegment(seg[:cut])
		want := 0
		for _, e := range ends {
			if e <= cut {
				want++
			}
		}
		require.Len(t, sc.recs, want, "cut %d", cut)
		require.Zero(t, sc.damaged, "cut %d: a cut is a torn tail, not damage", cut)
		consumed := len(journalMagic)
		if want > 0 {
			consumed = ends[want-1]
		}
		if cut < len(journalMagic) {
			consumed = 0
		}
		require.Equal(t, len(bytes.TrimRight(seg[consumed:cut], "\x00")), sc.torn, "cut %d", cut)
		for i, r := range sc.recs {
			assert.Equal(t, fmt.Sprintf("r%d%s", i, CaptureFileSuffix), r.name)
			assert.Equal(t, recordLine(i, i), r.line)
		}
	}
	for at := ends[0]; at < ends[1]; at++ {
		bad := append([]byte(nil), seg...)
		bad[at] ^= 0x20
		sc := parseJournalSegment(bad)
		require.Len(t, sc.recs, 2, "damage at %d costs the second frame only", at)
		assert.Equal(t, recordLine(2, 2), sc.recs[1].line, "damage at %d: the third frame is read", at)
		assert.Equal(t, ends[1]-ends[0], sc.damaged, "damage at %d", at)
		assert.Zero(t, sc.torn)
	}
	for at := ends[1]; at < ends[2]; at++ {
		bad := append([]byte(nil), seg...)
		bad[at] ^= 0x20
		sc := parseJournalSegment(bad)
		require.Len(t, sc.recs, 2, "damage at %d in the last frame", at)
		assert.Equal(t, ends[2]-ends[1], sc.torn+sc.damaged, "damage at %d: a torn tail when it still starts like a frame, else damage", at)
		if at >= ends[1]+journalFrameHeader+len("r2"+CaptureFileSuffix)+2 { // in the line: the frame's start is intact
			assert.Equal(t, ends[2]-ends[1], sc.torn, "damage at %d", at)
		}
	}
	for at := range len(journalMagic) {
		bad := append([]byte(nil), seg...)
		bad[at] ^= 0x20
		sc := parseJournalSegment(bad)
		require.Len(t, sc.recs, 3, "a damaged header at %d costs no frame", at)
		assert.Equal(t, len(journalMagic), sc.damaged)
		assert.True(t, sc.headerless)
	}
	sc := parseJournalSegment(append(append([]byte(nil), seg...), make([]byte, 4096)...))
	assert.Len(t, sc.recs, 3)
	assert.Zero(t, sc.torn, "the zeros after the records are not torn")
	assert.Zero(t, sc.damaged)
	for _, name := range []string{"", ".", "..", "a/b", "../escape" + CaptureFileSuffix, JournalDirName, strings.Repeat("a", 256),
		"r0" + MarkerFileSuffix, "evil.sh", "rollouts.jsonl", CaptureFileSuffix, "a\nb" + CaptureFileSuffix} {
		refused := appendJournalFrame([]byte(journalMagic), name, recordLine(0, 0))
		sc := parseJournalSegment(appendJournalFrame(refused, "ok"+CaptureFileSuffix, recordLine(1, 1)))
		require.Len(t, sc.recs, 1, "name %q: refused, the next frame read", name)
		assert.Equal(t, "ok"+CaptureFileSuffix, sc.recs[0].name)
		assert.Equal(t, len(refused)-len(journalMagic), sc.damaged, "name %q", name)
		require.Len(t, sc.refused, 1)
		assert.Contains(t, sc.refused[0], "no line file of the store directory")
	}
	sc = parseJournalSegment(appendJournalFrame([]byte(journalMagic), "a"+CaptureFileSuffix, []byte("{}")))
	require.Len(t, sc.refused, 1)
	assert.Contains(t, sc.refused[0], "line must be one JSON object")
	assert.Empty(t, sc.recs)
	for _, line := range []string{"{garbage}\n", `{"a":1,}` + "\n", "{\"a\":\"\xff\"}\n", `{"a":1}}` + "\n", `{"a":}` + "\n"} {
		sc = parseJournalSegment(appendJournalFrame([]byte(journalMagic), "a"+CaptureFileSuffix, []byte(line)))
		require.Len(t, sc.refused, 1, "%q", line)
		assert.Contains(t, sc.refused[0], "not valid JSON", "%q", line)
	}
	for _, name := range []string{"r1" + CaptureFileSuffix, "r1" + ObservationsFileSuffix, UnattributedRolloutID + ObservationsFileSuffix} {
		sc = parseJournalSegment(appendJournalFrame([]byte(journalMagic), name, recordLine(0, 0)))
		assert.Len(t, sc.recs, 1, "%s is a line file of the store", name)
	}
	// Unreadable bytes past a run of zeros, or beyond journalTornMax, cannot be a torn write.
	far := append(append(append([]byte(nil), seg...), make([]byte, journalTornMax)...), "junk"...)
	sc = parseJournalSegment(far)
	assert.Len(t, sc.recs, 3)
	assert.Zero(t, sc.torn)
	assert.Equal(t, journalTornMax+4, sc.damaged)
	assert.True(t, sc.isDamaged())
}

func FuzzParseJournalSegment(f *testing.F) {
	seg := appendJournalFrame([]byte(journalMagic), "a"+CaptureFileSuffix, recordLine(1, 1))
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add([]byte(journalMagic + "\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add(appendJournalFrame(append(append([]byte(nil), seg...), 1, 2, 3), "b"+CaptureFileSuffix, recordLine(2, 2)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := parseJournalSegment(b)
		require.GreaterOrEqual(t, sc.torn, 0)
		require.GreaterOrEqual(t, sc.damaged, 0)
		require.LessOrEqual(t, sc.torn+sc.damaged, len(b))
		again := []byte(journalMagic)
		for _, r := range sc.recs {
			require.NoError(t, checkLine(r.line))
			require.True(t, validJournalName(r.name))
			again = appendJournalFrame(again, r.name, r.line)
		}
		if !sc.isDamaged() && len(sc.recs) > 0 {
			require.True(t, bytes.HasPrefix(b, again), "without damage the intact part re-encodes to itself")
			require.Equal(t, len(bytes.TrimRight(b[len(again):], "\x00")), sc.torn)
		}
	})
}

// Concurrent appends to different rollout files share journal fdatasyncs; the files are fsynced
// only by the background sync or Close, which then removes the journal.
func TestJournalGroupCommitAcrossRollouts(t *testing.T) {
	const rollouts, each = 32, 20
	dir := t.TempDir()
	s := newJournalStore(t, dir)
	assert.Equal(t, DurabilityJournal, s.Durability())
	var wg sync.WaitGroup
	for r := range rollouts {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, s.Append(t.Context(), "r"+strconv.Itoa(r), recordLine(r, r*each+i)))
			}
		})
	}
	wg.Wait()
	st := s.SyncStats()
	assert.EqualValues(t, rollouts*each, st.Lines)
	assert.Zero(t, st.FileSyncs, "no rollout file is fsynced on the call path")
	assert.Less(t, st.JournalSyncs, int64(rollouts*each), "batches share an fdatasync")
	require.Len(t, owners(t, dir), 1)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	st = s.SyncStats()
	assert.EqualValues(t, rollouts, st.FileSyncs, "Close fsyncs each file it wrote once")
	assert.Empty(t, owners(t, dir), "a closed journal is removed")
	seen := countRecords(t, s)
	require.Len(t, seen, rollouts*each)
	for v, n := range seen {
		require.Equal(t, 1, n, "record %d", v)
	}
	err := s.Append(t.Context(), "r0", recordLine(0, 99999))
	require.ErrorIs(t, err, errStoreClosed)
}

// The background sync fsyncs the files written during an interval, then removes the segment
// covering them.
func TestJournalBackgroundSync(t *testing.T) {
	dir := t.TempDir()
	s := newJournalStore(t, dir, WithJournalSyncInterval(5*time.Millisecond))
	defer func() { require.NoError(t, s.Close()) }()
	mustAppend(t, s, "a", string(recordLine(0, 0)))
	mustAppend(t, s, "b", string(recordLine(1, 1)))
	ownerDir := filepath.Join(dir, JournalDirName, owners(t, dir)[0])
	require.Eventually(t, func() bool {
		segs, err := journalSegments(ownerDir)
		return err == nil && len(segs) == 1 && s.SyncStats().FileSyncs == 2 && !strings.HasSuffix(segs[0], fmt.Sprintf(journalSegPattern, 1))
	}, 5*time.Second, time.Millisecond, "the first segment is removed after both files were fsynced")
}

// A journal whose owner runs is never touched by a recovery.
func TestJournalLiveIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	s := newJournalStore(t, dir)
	mustAppend(t, s, "a", string(recordLine(0, 0)))
	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{Live: 1}, rec)
	require.Len(t, owners(t, dir), 1)
	require.NoError(t, s.Close())
	rec, err = r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{}, rec)

	plain := t.TempDir()
	p, err := NewStore(plain)
	require.NoError(t, err)
	rec, err = p.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{}, rec)
	_, err = os.Stat(filepath.Join(plain, JournalDirName))
	require.ErrorIs(t, err, os.ErrNotExist, "a recovery creates nothing where no journal is")
}

// syncedSizes is a machine's stable storage as the synced hook tells it: each file's size at its
// last fsync or fdatasync.
type syncedSizes struct {
	mu    sync.Mutex
	sizes map[string]int64
}

func (m *syncedSizes) option() StoreOption {
	m.sizes = map[string]int64{}
	return storeOptionFunc(func(c *storeConfig) {
		c.syncedHook = func(path string, size int64) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.sizes[path] = size
		}
	})
}

// crashMachine ends journaled store s as a power loss would: its process is gone (the journal's
// descriptors and lock released, no sync, no removal) and every file of the store directory and of
// its journal loses what was written to it after its last fsync or fdatasync.
func crashMachine(t *testing.T, s *Store, synced *syncedSizes) {
	t.Helper()
	j := s.journal
	close(j.stop)
	<-j.done
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	require.NoError(t, closeFile(j.cur.fd))
	require.NoError(t, closeFile(j.lockFD))
	synced.mu.Lock()
	defer synced.mu.Unlock()
	err := filepath.WalkDir(s.Dir(), func(path string, de os.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() || filepath.Base(path) == journalOwnerLock || filepath.Base(path) == journalSetupLock {
			return err
		}
		return os.Truncate(path, synced.sizes[path])
	})
	require.NoError(t, err)
}

// A simulated machine crash loses every rollout-file write since the last background sync;
// recovery appends every acknowledged record from the journal, each once.
func TestJournalMachineCrashRecovery(t *testing.T) {
	const rollouts, each = 16, 40
	dir := t.TempDir()
	var synced syncedSizes
	s := newJournalStore(t, dir, synced.option())
	var wg sync.WaitGroup
	for r := range rollouts {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, s.Append(t.Context(), "r"+strconv.Itoa(r), recordLine(r, r*each+i)))
				if r == 0 && i == each/2 {
					s.journal.rotate(false) // a background sync in the middle of the load
				}
			}
		})
	}
	wg.Wait()
	crashMachine(t, s, &synced)
	lost := rollouts*each - len(countRecords(t, s))
	require.Positive(t, lost, "the crash lost the writes after the last sync")

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Journals)
	assert.Equal(t, lost, rec.Appended)
	seen := countRecords(t, r)
	require.Len(t, seen, rollouts*each, "every acknowledged record is back")
	for v, n := range seen {
		require.Equal(t, 1, n, "record %d", v)
	}
	assert.Empty(t, owners(t, dir), "the replayed journal is removed")
}

// Two recoveries running at once append each missing record once.
func TestJournalConcurrentRecovery(t *testing.T) {
	for range 5 {
		dir := t.TempDir()
		var synced syncedSizes
		s := newJournalStore(t, dir, synced.option())
		for i := range 50 {
			mustAppend(t, s, "r"+strconv.Itoa(i%5), string(recordLine(i%5, i)))
		}
		crashMachine(t, s, &synced)
		var wg sync.WaitGroup
		var mu sync.Mutex
		appended := 0
		for range 2 {
			r, err := NewStore(dir)
			require.NoError(t, err)
			wg.Go(func() {
				rec, err := r.RecoverJournals()
				assert.NoError(t, err)
				mu.Lock()
				appended += rec.Appended
				mu.Unlock()
			})
		}
		wg.Wait()
		assert.Equal(t, 50, appended)
		seen := countRecords(t, s)
		require.Len(t, seen, 50)
		for v, n := range seen {
			require.Equal(t, 1, n, "record %d", v)
		}
	}
}

// A record the file already holds (same model_call_id, other bytes: another sender's) is not
// replayed; a torn journal tail is cut.
func TestJournalReplayIdempotentAndTorn(t *testing.T) {
	dir := t.TempDir()
	var synced syncedSizes
	s := newJournalStore(t, dir, synced.option())
	mustAppend(t, s, "a", string(recordLine(0, 1)))
	mustAppend(t, s, "a", string(recordLine(0, 2)))
	seg := s.journal.cur.path
	crashMachine(t, s, &synced)
	other := `{"model_call_id":"` + fmt.Sprintf("%032x", 1) + `","v":1,"sender":"other"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"+CaptureFileSuffix), []byte(other), 0o600))
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("\x40\x00\x00\x00torn"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, JournalRecovery{Journals: 1, Records: 2, Appended: 1, TornBytes: 8}, rec)
	assert.Equal(t, other+string(recordLine(0, 2)), readFile(t, filepath.Join(dir, "a"+CaptureFileSuffix)))
}

// runJournalKillChild appends records to 8 rollouts from 8 goroutines through a journaled store,
// printing each record's v once its Append returned, until it is killed.
func runJournalKillChild(dir string) {
	base, _ := strconv.Atoi(os.Getenv(childWriterEnv))
	s, err := NewStore(dir, WithDurability(DurabilityJournal), WithJournalSyncInterval(20*time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	for g := range 8 {
		go func() {
			for i := 0; ; i++ {
				v := base + g*100000 + i
				if err := s.Append(context.Background(), "k"+strconv.Itoa(g), recordLine(g, v)); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintln(out, v)
				_ = out.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}

// kill -9 at random points of a journaled writer's life, many times over the same directory:
// after each recovery every acknowledged record is present and none twice.
func TestJournalKill9(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 6
	}
	dir := t.TempDir()
	acked := map[int]bool{}
	for run := range runs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), journalKillEnv+"="+dir, childWriterEnv+"="+strconv.Itoa(run*1000000))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		lines := make(chan int, 1<<16)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				v, err := strconv.Atoi(sc.Text())
				if err == nil {
					lines <- v
				}
			}
		}()
		first := <-lines // the child is writing
		acked[first] = true
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		for v := range lines {
			acked[v] = true
		}
		_ = cmd.Wait()
		require.Empty(t, stderr.String(), "run %d", run)

		r, err := NewStore(dir)
		require.NoError(t, err)
		rec, err := r.RecoverJournals()
		require.NoError(t, err, "run %d", run)
		require.Equal(t, 1, rec.Journals, "run %d: the killed writer's journal", run)
		seen := countRecords(t, r)
		for v := range acked {
			require.Equal(t, 1, seen[v], "run %d: acknowledged record %d", run, v)
		}
		for v, n := range seen {
			require.Equal(t, 1, n, "run %d: record %d", run, v)
		}
		require.Empty(t, owners(t, dir), "run %d: every dead journal was recovered", run)
	}
}

// SPEC §2.7 with journals: 4 processes × 1000 appends to one rollout file, each process with its
// own journal, give 4000 intact lines, each once, and leave no journal behind.
func TestMultiProcessJournalAppendAtScale(t *testing.T) {
	const writers, count = 4, 1000
	dir := t.TempDir()
	startWriters(t, dir, "mpj", writers, count, 0, childJournal+"=1")
	s, err := NewStore(dir)
	require.NoError(t, err)
	lines, invalid, err := s.ReadAvailable("mpj")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	require.Len(t, lines, writers*count)
	seen := map[int]int{}
	for _, l := range lines {
		var v struct{ V int }
		require.NoError(t, json.Unmarshal(l.Line, &v))
		seen[v.V]++
	}
	require.Len(t, seen, writers*count)
	assert.Empty(t, owners(t, dir))
}

// A capture directory removed under a journaled store (README "What a fault costs"): the store
// recreates it at the next append, the next sync sets the journal up again under a live lock, and
// every record is in its file.
func TestJournalCaptureDirRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "caps")
	s := newJournalStore(t, dir)
	mustAppend(t, s, "a", string(recordLine(0, 0)))
	require.NoError(t, os.RemoveAll(dir))
	mustAppend(t, s, "a", string(recordLine(0, 1)))
	s.journal.rotate(false)
	require.Empty(t, s.journal.errs)
	require.Len(t, owners(t, dir), 1, "the journal is set up again")
	r, err := NewStore(dir)
	require.NoError(t, err)
	rec, err := r.RecoverJournals()
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Live, "under a lock that is held")
	mustAppend(t, s, "a", string(recordLine(0, 2)))
	require.NoError(t, s.Close())
	assert.Equal(t, map[int]int{1: 1, 2: 1}, countRecords(t, r), "the records after the removal")
	assert.Empty(t, owners(t, dir))
}

// A failed journal fdatasync fails the append before the line reaches its file; the next append
// succeeds.
func TestJournalSyncFailure(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	s := newJournalStore(t, t.TempDir(), WithSyncHook(func(path string) error {
		if strings.HasSuffix(path, journalSegSuffix) && fail.Load() {
			return unix.EIO
		}
		return nil
	}))
	err := s.Append(t.Context(), "a", recordLine(0, 0))
	require.ErrorIs(t, err, unix.EIO)
	assert.Empty(t, countRecords(t, s), "not appended to its file")
	fail.Store(false)
	mustAppend(t, s, "a", string(recordLine(0, 1)))
	require.NoError(t, s.Close())
	assert.Equal(t, map[int]int{1: 1}, countRecords(t, s))
}

// A new segment starts zero-filled for what its predecessor took (bounded), so that a batch's
// fdatasync overwrites written blocks; records past that go into fallocated space.
func TestJournalSegmentZeroFill(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		prev int64
		want int64
	}{
		{"first segment", 0, journalZeroMin},
		{"a small predecessor", 4096, journalZeroMin},
		{"rounded up", journalZeroMin + 1, 2 * journalZeroMin},
		{"as large as its predecessor", 9 * mib, 9 * mib},
		{"bounded", 1 << 40, journalZeroMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seg")
			fd, err := createExact(path, unix.O_WRONLY, 0o600)
			require.NoError(t, err)
			defer closeFile(fd) //nolint:errcheck // read-only checks below
			seg := &segment{path: path, fd: fd, size: int64(len(journalMagic))}
			require.NoError(t, seg.zeroFill(tc.prev))
			assert.Equal(t, tc.want, seg.alloc)
			var st unix.Stat_t
			require.NoError(t, unix.Fstat(fd, &st))
			assert.Equal(t, tc.want, st.Size)
			assert.GreaterOrEqual(t, st.Blocks*512, tc.want, "written blocks, not a sparse file")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Empty(t, bytes.TrimRight(b, "\x00"), "all zeros")
		})
	}
	t.Run("a rotation sizes the next segment from the last", func(t *testing.T) {
		dir := t.TempDir()
		s := newJournalStore(t, dir)
		big := bytes.Repeat([]byte("x"), 64<<10)
		for v := range 40 { // 40 × 64 KiB records: 2.5 MiB in the first segment
			line := fmt.Appendf(nil, `{"model_call_id":"%032x","pad":"%s"}`+"\n", v, big)
			require.NoError(t, s.Append(context.Background(), "r", line))
		}
		s.journal.rotate(false)
		s.journal.wmu.Lock()
		alloc := s.journal.cur.alloc
		s.journal.wmu.Unlock()
		assert.Equal(t, int64(3*journalZeroMin), alloc)
		require.NoError(t, s.Close())
	})
}

// A background sync failure is reported when it happens (through otel.Handle), not only at Close
// (a user trial saw it first at shutdown, many seconds later). A next segment that cannot be
// created (a full disk) is reported once while it keeps failing, and loses nothing: once a
// rotation succeeds again, Close reports nothing and removes the journal (a trial's gateway,
// its disk freed, still failed its shutdown on a stale ENOSPC and left the journal's directory).
func TestJournalBackgroundFailureReportedAtOnce(t *testing.T) {
	var got []error
	var mu sync.Mutex
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
	}))
	defer otel.SetErrorHandler(prev)
	s := newJournalStore(t, t.TempDir())
	mustAppend(t, s, "a", string(recordLine(0, 1)))
	next := filepath.Join(s.journal.dir, fmt.Sprintf(journalSegPattern, s.journal.seq+1))
	require.NoError(t, os.WriteFile(next, nil, 0o600)) // the next segment cannot be created
	s.journal.rotate(false)
	s.journal.rotate(false)
	mu.Lock()
	reported := slices.Clone(got)
	mu.Unlock()
	require.Len(t, reported, 1, "reported once while it keeps failing")
	assert.ErrorContains(t, reported[0], "background sync")
	assert.ErrorContains(t, reported[0], s.journal.dir)
	require.NoError(t, os.Remove(next))
	mustAppend(t, s, "a", string(recordLine(0, 2)))
	s.journal.rotate(false) // succeeds: the records of the old segment are in their durable file
	jdir := s.journal.dir
	require.NoError(t, s.Close(), "nothing was lost: nothing to report at Close")
	assert.NoDirExists(t, jdir)
	assert.Equal(t, map[int]int{1: 1, 2: 1}, countRecords(t, s))
}

// Crafted bytes with a frame's shape at every offset cannot make the search for intact frames
// quadratic: past its budget the rest counts as torn.
func TestJournalSegmentScanBounded(t *testing.T) {
	// Every 16-byte unit claims a 64 KiB frame whose payload has a record's shape and ends in "\n".
	unit := []byte("\x00\x00\x01\x00xx}\na\x00{zzzzz")
	b := []byte(journalMagic)
	for len(b) < 1<<20 {
		b = append(b, unit...)
	}
	sc := parseJournalSegment(b)
	assert.Empty(t, sc.recs)
	assert.Equal(t, len(b)-len(journalMagic), sc.torn+sc.damaged)
	assert.Positive(t, sc.damaged, "a search that gave up leaves damage, never a torn tail")
	budget := 1000
	at, spent := nextJournalFrame(b, len(journalMagic), &budget)
	assert.Equal(t, -1, at, "a spent budget ends the search")
	assert.True(t, spent)
	budget = journalScanBudget(len(unit))
	good := appendJournalFrame(append([]byte(nil), unit...), "a"+CaptureFileSuffix, recordLine(0, 0))
	at, spent = nextJournalFrame(good, 0, &budget)
	assert.Equal(t, len(unit), at, "within its budget the search finds the frame")
	assert.False(t, spent)
}
