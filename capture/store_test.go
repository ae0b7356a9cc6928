package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// Environment of a re-executed test binary acting as a writer process (SPEC §8 #71, conformance 042).
const (
	childDirEnv    = "GYMTRACE_CAPTURE_CHILD_DIR"
	childIDEnv     = "GYMTRACE_CAPTURE_CHILD_ID"
	childWriterEnv = "GYMTRACE_CAPTURE_CHILD_WRITER"
	childCountEnv  = "GYMTRACE_CAPTURE_CHILD_COUNT"
	childPadEnv    = "GYMTRACE_CAPTURE_CHILD_PAD"
	childJournal   = "GYMTRACE_CAPTURE_CHILD_JOURNAL" // "1": the writer's store is journaled
)

// TestMain is the package's only TestMain: it turns the binary into a writer process when started by
// startWriters, and otherwise runs the tests under goleak.
func TestMain(m *testing.M) {
	if dir := os.Getenv(writerChildEnv); dir != "" {
		offset, _ := strconv.Atoi(os.Getenv(childWriterEnv))
		if err := runChildSpanWriter(dir, offset); err != nil {
			fmt.Fprintln(os.Stderr, "child span writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv(journalKillEnv); dir != "" {
		runJournalKillChild(dir) // appends until killed
	}
	if dir := os.Getenv(childDirEnv); dir != "" {
		if err := runChildWriter(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// childRecord is the line a writer process appends: writer w's n-th record, a Gym raw exchange of a
// streamed chat call (usage 5/1/6, as conformance 042's upstream.sse) with extra keys writer, seq,
// v = w*count+n and, when pad > 0, pad bytes of one letter inside the request.
func childRecord(writer, seq, count, pad int) []byte {
	var b strings.Builder
	v := writer*count + seq
	fmt.Fprintf(&b, `{"model_call_id":"%032x","dialect":"chat",`, v)
	b.WriteString(`"model_ref":{"type":"responses_api_models","name":"policy_model"},`)
	b.WriteString(`"started_at":1760000000.25,"completed_at":1760000000.5,"latency_ms":250.0,"latency_ttft_ms":100.0,`)
	b.WriteString(`"status_code":200,"error_category":null,`)
	b.WriteString(`"request":{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"ok?"}]`)
	if pad > 0 {
		b.WriteString(`,"padding":"`)
		b.WriteString(strings.Repeat(string(rune('a'+writer%26)), pad))
		b.WriteString(`"`)
	}
	b.WriteString(`},"response":{"id":"chatcmpl-case042","object":"chat.completion","created":1760000000,`)
	b.WriteString(`"model":"gpt-4.1-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},`)
	b.WriteString(`"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}},`)
	fmt.Fprintf(&b, `"writer":%d,"seq":%d,"v":%d}`+"\n", writer, seq, v)
	return []byte(b.String())
}

func runChildWriter(dir string) error {
	id := os.Getenv(childIDEnv)
	writer, err1 := strconv.Atoi(os.Getenv(childWriterEnv))
	count, err2 := strconv.Atoi(os.Getenv(childCountEnv))
	pad, err3 := strconv.Atoi(os.Getenv(childPadEnv))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	var opts []StoreOption
	if os.Getenv(childJournal) == "1" {
		opts = append(opts, WithDurability(DurabilityJournal))
	}
	s, err := NewStore(dir, opts...)
	if err != nil {
		return err
	}
	for seq := range count {
		if err := s.Append(context.Background(), id, childRecord(writer, seq, count, pad)); err != nil {
			return errors.Join(err, s.Close())
		}
	}
	return s.Close()
}

// startWriters runs `writers` processes of this test binary, each appending count records to id.
func startWriters(t *testing.T, dir, id string, writers, count, pad int, env ...string) {
	t.Helper()
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*strings.Builder, writers)
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		outs[w] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[w], outs[w]
		cmd.Env = append(os.Environ(),
			childDirEnv+"="+dir, childIDEnv+"="+id,
			childWriterEnv+"="+strconv.Itoa(w), childCountEnv+"="+strconv.Itoa(count),
			childPadEnv+"="+strconv.Itoa(pad))
		cmd.Env = append(cmd.Env, env...)
		require.NoError(t, cmd.Start())
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "writer %d output: %s", w, outs[w].String())
	}
}

func newTestStore(t *testing.T, opts ...StoreOption) *Store {
	t.Helper()
	s, err := NewStore(t.TempDir(), opts...)
	require.NoError(t, err)
	return s
}

func mustAppend(t *testing.T, s *Store, id, line string) {
	t.Helper()
	require.NoError(t, s.Append(t.Context(), id, []byte(line)))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestValidateRolloutIDVectors(t *testing.T) {
	s := newTestStore(t)
	for _, c := range testvectors.Load(t, "store_ids.json") {
		t.Run(c.Name, func(t *testing.T) {
			var id string
			require.NoError(t, json.Unmarshal(c.Input, &id))
			var want struct {
				FileName   string `json:"file_name"`
				MarkerName string `json:"marker_name"`
				Error      string `json:"error"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))

			err := ValidateRolloutID(id)
			capturePath, cerr := s.CapturePath(id)
			markerPath, merr := s.MarkerPath(id)
			if want.Error != "" {
				msg, ok := strings.CutPrefix(want.Error, "ValueError: ")
				require.True(t, ok, "vector error %q", want.Error)
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalidRolloutID)
				// Gym's message first, then the rule.
				assert.True(t, strings.HasPrefix(err.Error(), msg+" ("), "got %q, want prefix %q", err.Error(), msg)
				assert.Contains(t, err.Error(), "ASCII letters, digits")
				assert.ErrorIs(t, cerr, ErrInvalidRolloutID)
				assert.ErrorIs(t, merr, ErrInvalidRolloutID)
				return
			}
			require.NoError(t, err)
			require.NoError(t, cerr)
			require.NoError(t, merr)
			assert.Equal(t, filepath.Join(s.Dir(), want.FileName), capturePath)
			assert.Equal(t, filepath.Join(s.Dir(), want.MarkerName), markerPath)
		})
	}
}

func TestNewStore(t *testing.T) {
	t.Run("relative dir refused", func(t *testing.T) {
		_, err := NewStore("relative/dir")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"relative/dir"`)
		assert.Contains(t, err.Error(), "absolute")
	})
	t.Run("empty dir refused", func(t *testing.T) {
		_, err := NewStore("")
		require.ErrorContains(t, err, "absolute")
	})
	t.Run("a nil option is skipped", func(t *testing.T) {
		s, err := NewStore(t.TempDir(), nil, WithFileMode(0o640), nil)
		require.NoError(t, err)
		require.NoError(t, s.Close())
	})
	t.Run("mkdir -p with default modes", func(t *testing.T) {
		old := unix.Umask(0o022)
		t.Cleanup(func() { unix.Umask(old) })
		dir := filepath.Join(t.TempDir(), "a", "b", "captures")
		s, err := NewStore(dir)
		require.NoError(t, err)
		assert.Equal(t, dir, s.Dir())
		st, err := os.Stat(dir)
		require.NoError(t, err)
		assert.True(t, st.IsDir())
		assert.Equal(t, fs.FileMode(0o700), st.Mode().Perm())
		mustAppend(t, s, "0-0", `{"a":1}`+"\n")
		require.NoError(t, s.MarkIncomplete("0-0"))
		for _, p := range []string{filepath.Join(dir, "0-0.capture.jsonl"), filepath.Join(dir, "0-0.capture.incomplete")} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), p)
		}
	})
	t.Run("custom modes", func(t *testing.T) {
		old := unix.Umask(0o022)
		t.Cleanup(func() { unix.Umask(old) })
		dir := filepath.Join(t.TempDir(), "c")
		s, err := NewStore(dir, WithDirMode(0o750), WithFileMode(0o640))
		require.NoError(t, err)
		st, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o750), st.Mode().Perm())
		mustAppend(t, s, "x", `{"a":1}`+"\n")
		st, err = os.Stat(filepath.Join(dir, "x.capture.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm())
	})
	t.Run("existing dir is fine", func(t *testing.T) {
		dir := t.TempDir()
		_, err := NewStore(dir)
		require.NoError(t, err)
		_, err = NewStore(dir)
		require.NoError(t, err)
	})
	t.Run("dir under a regular file fails", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		_, err := NewStore(filepath.Join(file, "sub"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "create directory")
		assert.ErrorIs(t, err, syscall.ENOTDIR)
	})
}

// SPEC §8 #4: pre-seeded "\n", Unicode payload, then a second record.
func TestAppendUnicodeAfterPreseededNewline(t *testing.T) {
	s := newTestStore(t)
	path, err := s.CapturePath("r")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("\n"), 0o600))

	first := `{"request":{"text":"Unicode payload: café 東京","path":"/tmp/some/path"},"response":{}}`
	mustAppend(t, s, "r", first+"\n")
	rows, err := s.Read("r")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.JSONEq(t, first, string(rows[0]))
	assert.Equal(t, "\n"+first+"\n", readFile(t, path), "no repair newline after a file ending in \\n")

	second := `{"request":{},"response":{}}`
	mustAppend(t, s, "r", second+"\n")
	lines, invalid, err := s.ReadAvailable("r")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	require.Len(t, lines, 2)
	assert.Equal(t, []int{0, 1}, []int{lines[0].Index, lines[1].Index})
	assert.Equal(t, first, string(lines[0].Line))
	assert.Equal(t, second, string(lines[1].Line))
}

func TestAppendRefusesBadInput(t *testing.T) {
	s := newTestStore(t)
	tests := []struct {
		name, id, line, want string
	}{
		{"invalid id", "a/b", `{"a":1}` + "\n", "Invalid rollout id: 'a/b'"},
		{"empty line", "r", "", "JSON object"},
		{"no trailing newline", "r", `{"a":1}`, "JSON object"},
		{"not an object", "r", "[1]\n", "JSON object"},
		{"two records", "r", `{"a":1}` + "\n" + `{"b":2}` + "\n", "newline at byte 7"},
		{"blank", "r", "\n", "JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Append(t.Context(), tt.id, []byte(tt.line))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, statErr := os.Stat(filepath.Join(s.Dir(), "r.capture.jsonl"))
			assert.ErrorIs(t, statErr, fs.ErrNotExist, "nothing written")
		})
	}
}

func TestAppendCancelledContextWritesNothing(t *testing.T) {
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Append(ctx, "r", []byte(`{"a":1}`+"\n"))
	require.ErrorIs(t, err, context.Canceled)
	ok, err := s.HasCapture("r")
	require.NoError(t, err)
	assert.False(t, ok)

	// A detached context still writes.
	require.NoError(t, s.Append(context.WithoutCancel(ctx), "r", []byte(`{"a":1}`+"\n")))
	rows, err := s.Read("r")
	require.NoError(t, err)
	assert.Len(t, rows, 1)
}

// SPEC §0 D7: an append after a torn tail first ends the torn line.
func TestAppendRepairsTornTail(t *testing.T) {
	const torn = `{"model_call_id":"x","dia`
	tests := []struct {
		name, seed, want string
	}{
		{"torn tail gets a newline", torn, torn + "\n" + `{"a":1}` + "\n"},
		{"complete tail untouched", `{"z":0}` + "\n", `{"z":0}` + "\n" + `{"a":1}` + "\n"},
		{"empty file untouched", "", `{"a":1}` + "\n"},
		{"trailing spaces are not a newline", `{"z":0}  `, `{"z":0}  ` + "\n" + `{"a":1}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			path, err := s.CapturePath("r")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, []byte(tt.seed), 0o600))
			mustAppend(t, s, "r", `{"a":1}`+"\n")
			assert.Equal(t, tt.want, readFile(t, path))
		})
	}
	t.Run("torn line stays one unreadable line", func(t *testing.T) {
		s := newTestStore(t)
		mustAppend(t, s, "r", `{"a":0}`+"\n")
		path, _ := s.CapturePath("r")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(torn)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		mustAppend(t, s, "r", `{"a":2}`+"\n")

		lines, invalid, err := s.ReadAvailable("r")
		require.NoError(t, err)
		assert.Equal(t, 1, invalid)
		require.Len(t, lines, 2)
		assert.Equal(t, 0, lines[0].Index)
		assert.Equal(t, 2, lines[1].Index)
		assert.Equal(t, `{"a":2}`, string(lines[1].Line))
		_, err = s.Read("r")
		require.ErrorContains(t, err, "line 2")
	})
}

func TestMarkerAndLookup(t *testing.T) {
	s := newTestStore(t)
	check := func(id string, wantIncomplete, wantHas bool) {
		t.Helper()
		inc, err := s.IsIncomplete(id)
		require.NoError(t, err)
		assert.Equal(t, wantIncomplete, inc, "IsIncomplete(%s)", id)
		has, err := s.HasCapture(id)
		require.NoError(t, err)
		assert.Equal(t, wantHas, has, "HasCapture(%s)", id)
	}
	check("none", false, false)

	require.NoError(t, s.MarkIncomplete("marked"))
	require.NoError(t, s.MarkIncomplete("marked"), "existing marker is fine")
	check("marked", true, true)
	marker, _ := s.MarkerPath("marked")
	assert.Empty(t, readFile(t, marker))

	mustAppend(t, s, "filed", `{"a":1}`+"\n")
	check("filed", false, true)

	for name, fn := range map[string]func() error{
		"MarkIncomplete": func() error { return s.MarkIncomplete("../x") },
		"IsIncomplete":   func() error { _, err := s.IsIncomplete("../x"); return err },
		"HasCapture":     func() error { _, err := s.HasCapture("../x"); return err },
		"Clear":          func() error { return s.Clear("../x") },
		"Read":           func() error { _, err := s.Read("../x"); return err },
		"ReadAvailable":  func() error { _, _, err := s.ReadAvailable("../x"); return err },
	} {
		t.Run(name+" invalid id", func(t *testing.T) {
			assert.ErrorIs(t, fn(), ErrInvalidRolloutID)
		})
	}
}

// SPEC §8 #68: 20 goroutines appending to one id give 20 intact rows.
func TestAppendConcurrentSafe(t *testing.T) {
	s := newTestStore(t)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			errs[i] = s.Append(t.Context(), "r", []byte(fmt.Sprintf(`{"i":%d,"request":{},"response":{}}`+"\n", i)))
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	rows, err := s.Read("r")
	require.NoError(t, err)
	require.Len(t, rows, 20)
	seen := map[int]bool{}
	for _, row := range rows {
		var v struct{ I int }
		require.NoError(t, json.Unmarshal(row, &v))
		seen[v.I] = true
	}
	for i := range 20 {
		assert.True(t, seen[i], "i=%d", i)
	}
	assert.Empty(t, s.files, "queues are dropped when idle")
}

// Concurrent appends to one file share commits: the lines queued while a commit is in flight are
// written together by the next one.
func TestAppendGroupCommit(t *testing.T) {
	const n = 32
	var commits atomic.Int32
	firstEntered := make(chan struct{})
	release := make(chan struct{})
	var s *Store
	s = newTestStore(t, WithSyncHook(func(string) error {
		if commits.Add(1) == 1 {
			close(firstEntered)
			<-release
		}
		return nil
	}))
	var wg sync.WaitGroup
	errs := make([]error, n)
	wg.Go(func() { errs[0] = s.Append(t.Context(), "r", []byte(`{"i":0}`+"\n")) })
	<-firstEntered
	for i := 1; i < n; i++ {
		wg.Go(func() { errs[i] = s.Append(t.Context(), "r", []byte(fmt.Sprintf(`{"i":%d}`+"\n", i))) })
	}
	path, _ := s.CapturePath("r")
	require.Eventually(t, func() bool {
		s.mu.Lock()
		q := s.files[path]
		s.mu.Unlock()
		if q == nil {
			return false
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == n-1
	}, 5*time.Second, time.Millisecond, "all other appends queue behind the first commit")
	close(release)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, int32(2), commits.Load(), "one commit for the first line, one for the other %d", n-1)
	rows, err := s.Read("r")
	require.NoError(t, err)
	assert.Len(t, rows, n)
}

// Many unsynchronised appenders with a slowish fsync need fewer fsyncs than records.
func TestAppendGroupCommitFewerSyncs(t *testing.T) {
	const n = 64
	var commits atomic.Int32
	s := newTestStore(t, WithSyncHook(func(string) error {
		commits.Add(1)
		time.Sleep(2 * time.Millisecond)
		return nil
	}))
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = s.Append(t.Context(), "r", []byte(fmt.Sprintf(`{"i":%d}`+"\n", i))) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	rows, err := s.Read("r")
	require.NoError(t, err)
	assert.Len(t, rows, n)
	assert.Less(t, int(commits.Load()), n)
}

// Every Append of a failed batch gets the failure.
func TestAppendSyncFailureReachesEveryWaiter(t *testing.T) {
	boom := errors.New("disk on fire")
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int32
	s := newTestStore(t, WithSyncHook(func(string) error {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			return nil
		}
		return boom
	}))
	var wg sync.WaitGroup
	var firstErr error
	wg.Go(func() { firstErr = s.Append(t.Context(), "r", []byte(`{"i":0}`+"\n")) })
	<-entered
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Append(t.Context(), "r", []byte(fmt.Sprintf(`{"i":%d}`+"\n", i+1))) })
	}
	path, _ := s.CapturePath("r")
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.files[path] != nil && s.files[path].refs == 5
	}, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	require.NoError(t, firstErr)
	for i, err := range errs {
		assert.ErrorIs(t, err, boom, "append %d", i+1)
		assert.ErrorContains(t, err, "capture append r:")
	}
}

func TestAppendOpenFailure(t *testing.T) {
	s := newTestStore(t)
	path, _ := s.CapturePath("r")
	require.NoError(t, os.Mkdir(path, 0o700)) // the capture path is a directory: open fails
	err := s.Append(t.Context(), "r", []byte(`{"a":1}`+"\n"))
	require.Error(t, err)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, path, pe.Path)
}

// SPEC §8 #69: a slow fsync on 0-0 does not block an append to 1-0.
func TestSlowSyncDoesNotBlockOtherRollout(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var s *Store
	s = newTestStore(t, WithSyncHook(func(path string) error {
		if filepath.Base(path) == "0-0.capture.jsonl" {
			close(entered)
			<-release
		}
		return nil
	}))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	var slowErr error
	wg.Go(func() { slowErr = s.Append(context.Background(), "0-0", []byte(`{"request":{},"response":{}}`+"\n")) })
	<-entered

	done := make(chan error, 1)
	go func() { done <- s.Append(context.Background(), "1-0", []byte(`{"request":{},"response":{}}`+"\n")) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Second):
		t.Fatal("append to 1-0 waited for the fsync of 0-0")
	}
	rows, err := s.Read("1-0")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, `{"request":{},"response":{}}`, string(rows[0]))
	t.Cleanup(func() { assert.NoError(t, slowErr) })
}

// SPEC §8 #70: a reader started while a writer holds LOCK_EX mid-line waits, then sees exactly the
// completed row.
func TestReaderWaitsForWriterLock(t *testing.T) {
	s := newTestStore(t)
	path, _ := s.CapturePath("r")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString(`{"request":{},`)
	require.NoError(t, err)

	type result struct {
		rows []json.RawMessage
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rows, err := s.Read("r")
		done <- result{rows, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("reader did not wait for LOCK_EX: %v %q", r.err, r.rows)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = f.WriteString(`"response":{}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_UN))

	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.Len(t, r.rows, 1)
		assert.Equal(t, `{"request":{},"response":{}}`, string(r.rows[0]))
	case <-time.After(5 * time.Second):
		t.Fatal("reader still blocked after unlock")
	}
}

// A writer waits for a lock held by another process (here: another descriptor) before writing.
func TestAppendWaitsForForeignLock(t *testing.T) {
	s := newTestStore(t)
	mustAppend(t, s, "r", `{"a":0}`+"\n")
	path, _ := s.CapturePath("r")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString(`{"a":`)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- s.Append(context.Background(), "r", []byte(`{"a":2}`+"\n")) }()
	select {
	case err := <-done:
		t.Fatalf("append did not wait for LOCK_EX: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = f.WriteString("1}\n")
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_UN))
	require.NoError(t, <-done)
	assert.Equal(t, `{"a":0}`+"\n"+`{"a":1}`+"\n"+`{"a":2}`+"\n", readFile(t, path))
}

// SPEC §8 #71: 4 processes × 100 appends give 400 intact rows with values 0..399.
func TestMultiProcessAppend(t *testing.T) {
	s := newTestStore(t)
	startWriters(t, s.Dir(), "mp", 4, 100, 0)
	rows, err := s.Read("mp")
	require.NoError(t, err)
	require.Len(t, rows, 400)
	seen := make([]int, 400)
	for _, row := range rows {
		var v struct{ V int }
		require.NoError(t, json.Unmarshal(row, &v))
		require.GreaterOrEqual(t, v.V, 0)
		require.Less(t, v.V, 400)
		seen[v.V]++
	}
	for v, n := range seen {
		assert.Equal(t, 1, n, "value %d", v)
	}
}

// testdata/conformance/042-capture-jsonl-concurrent-writers: 8 processes × 50 records of 70000 bytes of
// padding each into one file give 400 intact lines.
func TestConformanceConcurrentWriters(t *testing.T) {
	dir := filepath.Join(testvectors.Dir(t, "conformance"), "042-capture-jsonl-concurrent-writers")
	var scenario struct {
		Kind      string `json:"kind"`
		Writers   int    `json:"writers"`
		Processes bool   `json:"processes"`
		Records   int    `json:"records_per_writer"`
		Padding   int    `json:"padding_bytes_per_record"`
		SameFile  bool   `json:"same_capture_file"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &scenario))
	require.Equal(t, "concurrent_writers", scenario.Kind)
	require.True(t, scenario.Processes)
	require.True(t, scenario.SameFile)
	var expected struct {
		Capture struct {
			NonblankLines int  `json:"capture_file_nonblank_lines"`
			IntactLines   int  `json:"intact_lines"`
			StrictRaises  bool `json:"strict_read_raises"`
			Tolerant      struct {
				InvalidCount int   `json:"invalid_count"`
				CallIndex    []int `json:"call_index"`
			} `json:"tolerant_read"`
			MarkerPresent bool `json:"marker_present"`
		} `json:"capture"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))

	s := newTestStore(t)
	startWriters(t, s.Dir(), "c042", scenario.Writers, scenario.Records, scenario.Padding)

	rows, err := s.Read("c042")
	if expected.Capture.StrictRaises {
		require.Error(t, err)
	} else {
		require.NoError(t, err)
	}
	assert.Len(t, rows, expected.Capture.NonblankLines)
	lines, invalid, err := s.ReadAvailable("c042")
	require.NoError(t, err)
	assert.Equal(t, expected.Capture.Tolerant.InvalidCount, invalid)
	require.Len(t, lines, expected.Capture.IntactLines)
	indices := make([]int, len(lines))
	seen := map[[2]int]int{}
	for i, l := range lines {
		indices[i] = l.Index
		var v struct {
			Writer, Seq int
			Request     struct{ Padding string }
		}
		require.NoError(t, json.Unmarshal(l.Line, &v))
		pad := v.Request.Padding
		require.Len(t, pad, scenario.Padding)
		require.Equal(t, strings.Repeat(pad[:1], scenario.Padding), pad, "no other record's bytes inside")
		require.Equal(t, string(rune('a'+v.Writer%26)), pad[:1], "padding belongs to its writer")
		seen[[2]int{v.Writer, v.Seq}]++
	}
	assert.Equal(t, expected.Capture.Tolerant.CallIndex, indices)
	assert.Len(t, seen, scenario.Writers*scenario.Records, "each (writer, seq) once")
	inc, err := s.IsIncomplete("c042")
	require.NoError(t, err)
	assert.Equal(t, expected.Capture.MarkerPresent, inc)

	// The attachment: no gaps, the expected metrics, and every call derived as expected.record says.
	want := testvectors.Value(t, b)
	wantCapture, _ := want.Get("capture")
	wantRecord, _ := want.Get("record")
	a, err := BuildAttachment([]*Store{s}, "c042", false)
	require.NoError(t, err)
	got := testvectors.Value(t, a.AppendJSON(nil))
	wantGaps, _ := wantCapture.Get("gaps")
	gotGaps, ok := got.Get("gaps")
	if wantGaps.Len() == 0 {
		assert.False(t, ok, "no gaps key, got %s", gotGaps)
	} else {
		assert.Equal(t, wantGaps.String(), gotGaps.String())
	}
	wantMetrics, _ := wantCapture.Get("metrics")
	gotMetrics, _ := got.Get("metrics")
	for _, m := range wantMetrics.Members() {
		g, _ := gotMetrics.Get(m.Key)
		assert.Equal(t, m.Value.String(), g.String(), "metrics.%s", m.Key)
	}
	calls, _ := got.Get("calls")
	require.Equal(t, expected.Capture.IntactLines, calls.Len())
	for i, call := range calls.Elems() {
		for _, m := range wantRecord.Members() {
			g, ok := call.Get(m.Key)
			require.True(t, ok, "call %d has %s", i, m.Key)
			require.Equal(t, m.Value.String(), g.String(), "call %d %s", i, m.Key)
		}
	}
}
