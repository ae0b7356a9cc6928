package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// This file checks Store.AppendStream: a line written in pieces lands exactly like Append's, is
// group-committed with Appends, and a bad line, a failing writer or a full disk fails the commit
// and leaves the file as it was.

// paddedLine returns a record line {"t":tag,"pad":"…"} of about size bytes (the pad is one letter).
func paddedLine(tag string, size int) []byte {
	head := `{"t":"` + tag + `","pad":"`
	n := max(size-len(head)-3, 0)
	return []byte(head + strings.Repeat(string(rune('a'+len(tag)%26)), n) + `"}` + "\n")
}

// spanRecordLine returns a real capture line with a response_raw of about size bytes (an SSE text
// with quotes, newlines, multibyte and ill-formed UTF-8), and its SpanLine.
func spanRecordLine(t *testing.T, size int) ([]byte, *SpanLine) {
	t.Helper()
	chunk := "data: {\"choices\":[{\"delta\":{\"content\":\"Grüß 東京 🙂\"}}]}\n\n\xff"
	raw := strings.Repeat(chunk, size/len(chunk)+1)
	e := Exchange{ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: "chat", LatencyMS: 842.7,
		Request: []byte(`{"model":"policy","stream":true}`), ResponseRaw: &raw}
	a := newAttrMap(ExchangeAttributes(&e))
	start := time.Unix(1786032154, 123456641)
	end := start.Add(time.Second)
	line, _, err := AppendLineFromAttributes(nil, a, start, end, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	require.NoError(t, err)
	l, err := NewSpanLine(a, start, end, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	require.NoError(t, err)
	return line, l
}

// splitLine cuts line into pieces of size bytes (the last one shorter).
func splitLine(line []byte, size int) [][]byte {
	var out [][]byte
	for len(line) > 0 {
		n := min(size, len(line))
		out = append(out, line[:n])
		line = line[n:]
	}
	return out
}

// emitAll is a line writer that emits pieces in order and returns emit's first error.
func emitAll(pieces ...[]byte) func(emit func([]byte) error) error {
	return func(emit func([]byte) error) error {
		for _, p := range pieces {
			if err := emit(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// seedFile writes content as id's capture file.
func seedFile(t *testing.T, s *Store, id, content string) string {
	t.Helper()
	path, err := s.CapturePath(id)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// waitPending waits until n requests are queued behind the commit in flight on path.
func waitPending(t *testing.T, s *Store, path string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		q := s.files[path]
		s.mu.Unlock()
		if q == nil {
			return false
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == n
	}, 5*time.Second, time.Millisecond, "want %d queued requests", n)
}

func TestAppendStreamMatchesAppend(t *testing.T) {
	big, spanLine := spanRecordLine(t, 300<<10)
	huge := paddedLine("huge", 1<<20)
	small := []byte(`{"a":1}` + "\n")
	tests := []struct {
		name   string
		line   []byte
		pieces [][]byte
	}{
		{name: "small line, one piece", line: small, pieces: [][]byte{small}},
		{name: "small line, byte by byte", line: small, pieces: splitLine(small, 1)},
		{name: "brace and newline apart", line: small, pieces: [][]byte{small[:6], small[6:7], small[7:]}},
		{name: "empty pieces between", line: small, pieces: [][]byte{{}, small[:3], nil, small[3:], {}}},
		{name: "empty object", line: []byte("{}\n"), pieces: [][]byte{[]byte("{"), []byte("}"), []byte("\n")}},
		{name: "record line, one piece", line: big, pieces: [][]byte{big}},
		{name: "record line, 64 KiB pieces", line: big, pieces: splitLine(big, LinePieceBytes)},
		{name: "record line, odd pieces", line: big, pieces: splitLine(big, 4093)},
		{name: "1 MiB line, 64 KiB pieces", line: huge, pieces: splitLine(huge, LinePieceBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const seed = `{"z":0}` + "\n"
			whole, streamed := newTestStore(t), newTestStore(t)
			wholePath := seedFile(t, whole, "r", seed)
			streamedPath := seedFile(t, streamed, "r", seed)
			require.NoError(t, whole.Append(t.Context(), "r", tt.line))
			calls := 0
			write := emitAll(tt.pieces...)
			require.NoError(t, streamed.AppendStream(t.Context(), "r", len(tt.line), func(emit func([]byte) error) error {
				calls++
				return write(emit)
			}))
			assert.Equal(t, 1, calls, "write is called once")
			got := readFile(t, streamedPath)
			require.Equal(t, readFile(t, wholePath), got, "the same bytes as Append")
			require.Equal(t, seed+string(tt.line), got)

			lines, invalid, err := streamed.ReadAvailable("r")
			require.NoError(t, err)
			assert.Zero(t, invalid)
			require.Len(t, lines, 2)
			assert.Equal(t, string(bytes.TrimSuffix(tt.line, []byte("\n"))), string(lines[1].Line))
			rows, err := streamed.Read("r")
			require.NoError(t, err, "the strict reader reads it")
			assert.Len(t, rows, 2)
			assert.Empty(t, streamed.files, "queues are dropped when idle")
		})
	}
	t.Run("SpanLine.WriteTo as the writer", func(t *testing.T) {
		s := newTestStore(t)
		path := seedFile(t, s, "r", "")
		require.NoError(t, s.AppendStream(t.Context(), "r", spanLine.SizeHint(), func(emit func([]byte) error) error {
			_, err := spanLine.WriteTo(nil, emit)
			return err
		}))
		assert.Equal(t, string(big), readFile(t, path))
		recs, err := s.ReadModelCallRecords("r")
		require.NoError(t, err)
		assert.Len(t, recs, 1)
	})
	t.Run("write runs under the file's exclusive lock", func(t *testing.T) {
		s := newTestStore(t)
		path := seedFile(t, s, "r", "")
		var lockErr error
		require.NoError(t, s.AppendStream(t.Context(), "r", len(small), func(emit func([]byte) error) error {
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd) //nolint:errcheck // read-only probe
			lockErr = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
			return emit(small)
		}))
		assert.ErrorIs(t, lockErr, unix.EWOULDBLOCK, "another descriptor cannot lock the file while write runs")
	})
}

// Appends and streamed appends from many goroutines on one rollout: every line lands whole, once.
func TestAppendStreamConcurrentWithAppend(t *testing.T) {
	const goroutines, perG = 32, 3
	s := newTestStore(t)
	want := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, goroutines*perG)
	for g := range goroutines {
		wg.Go(func() {
			for n := range perG {
				tag := fmt.Sprintf("g%02dn%d", g, n)
				line := paddedLine(tag, []int{60, 100 << 10, 3 << 10}[(g+n)%3])
				mu.Lock()
				want[tag] = string(line[:len(line)-1])
				mu.Unlock()
				var err error
				if g%2 == 0 {
					err = s.Append(t.Context(), "r", line)
				} else {
					err = s.AppendStream(t.Context(), "r", len(line), func(emit func([]byte) error) error {
						for _, p := range splitLine(line, 16<<10) {
							if err := emit(p); err != nil {
								return err
							}
							runtime.Gosched()
						}
						return nil
					})
				}
				errs[g*perG+n] = err
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	lines, invalid, err := s.ReadAvailable("r")
	require.NoError(t, err)
	assert.Zero(t, invalid, "no torn or interleaved line")
	require.Len(t, lines, goroutines*perG)
	seen := map[string]bool{}
	for _, l := range lines {
		tag := string(l.Line[len(`{"t":"`) : len(`{"t":"`)+len("g00n0")])
		assert.False(t, seen[tag], "line %s written once", tag)
		seen[tag] = true
		assert.Equal(t, want[tag], string(l.Line), "line %s intact", tag)
	}
	_, err = s.Read("r")
	require.NoError(t, err)
	assert.Empty(t, s.files, "queues are dropped when idle")
}

// A line that breaks the contract, or a writer that fails, fails the call and leaves the file
// exactly as it was (the D7 repair newline included); the next append works.
func TestAppendStreamBadLineCutsBack(t *testing.T) {
	boom := errors.New("writer failed")
	big := paddedLine("big", 200<<10)
	tests := []struct {
		name    string
		write   func(emit func([]byte) error) error
		wantIs  error  // when set, errors.Is(err, wantIs)
		wantMsg string // when set, the error contains it
	}{
		{name: "write fails before any piece", write: func(func([]byte) error) error { return boom }, wantIs: boom},
		{name: "write fails after 200 KiB", write: func(emit func([]byte) error) error {
			if err := emitAll(splitLine(big[:len(big)-1], LinePieceBytes)...)(emit); err != nil {
				return err
			}
			return boom
		}, wantIs: boom},
		{name: "write fails after the whole line", write: func(emit func([]byte) error) error {
			if err := emit(big); err != nil {
				return err
			}
			return boom
		}, wantIs: boom},
		{name: "no final newline", write: emitAll([]byte(`{"a":1}`)), wantMsg: `ending in "}\n"`},
		{name: "large line without final newline", write: emitAll(splitLine(big[:len(big)-1], LinePieceBytes)...), wantMsg: `ending in "}\n"`},
		{name: "newline not after a brace", write: emitAll([]byte(`{"a":1 `), []byte("\n")), wantMsg: `ending in "}\n"`},
		{name: "inner newline in one piece", write: emitAll([]byte("{\"a\":\n1}\n")), wantMsg: "newline at byte 5"},
		{name: "inner newline in its own piece", write: emitAll([]byte(`{"a":`), []byte("\n"), []byte("1}\n")), wantMsg: "newline at byte 5"},
		{name: "inner newline after 200 KiB", write: emitAll(big[:len(big)-2], []byte("\n"), []byte("}\n")), wantMsg: "exactly one record"},
		{name: "not starting with a brace", write: emitAll([]byte("[1]\n")), wantMsg: `ending in "}\n"`},
		{name: "leading space", write: emitAll([]byte(` {"a":1}` + "\n")), wantMsg: `ending in "}\n"`},
		{name: "empty first piece, then not a brace", write: emitAll([]byte{}, []byte(`"a"}`+"\n")), wantMsg: `ending in "}\n"`},
		{name: "bytes after the newline in the same piece", write: emitAll([]byte(`{"a":1}` + "\nx")), wantMsg: "exactly one record"},
		{name: "bytes after the newline in the next piece", write: emitAll([]byte(`{"a":1}`+"\n"), []byte("x")), wantMsg: "exactly one record"},
		{name: "two records", write: emitAll([]byte(`{"a":1}`+"\n"), []byte(`{"b":2}`+"\n")), wantMsg: "exactly one record"},
		{name: "two records after a large one", write: emitAll(big, []byte(`{"b":2}`+"\n")), wantMsg: "exactly one record"},
		{name: "nothing emitted", write: emitAll(), wantMsg: `ending in "}\n"`},
		{name: "only empty pieces", write: emitAll(nil, []byte{}), wantMsg: `ending in "}\n"`},
		{name: "only a newline", write: emitAll([]byte("\n")), wantMsg: `ending in "}\n"`},
		{name: "too short", write: emitAll([]byte("}\n")), wantMsg: `ending in "}\n"`},
	}
	const torn = `{"model_call_id":"x","dia`
	for _, seed := range []struct{ name, content string }{
		{"empty file", ""}, {"complete line", `{"z":0}` + "\n"}, {"torn tail", torn},
	} {
		t.Run(seed.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					s := newTestStore(t)
					path := seedFile(t, s, "r", seed.content)
					err := s.AppendStream(t.Context(), "r", len(big), tt.write)
					require.Error(t, err)
					assert.Contains(t, err.Error(), "capture append r:")
					if tt.wantIs != nil {
						assert.ErrorIs(t, err, tt.wantIs)
					}
					if tt.wantMsg != "" {
						assert.Contains(t, err.Error(), tt.wantMsg)
					}
					require.Equal(t, seed.content, readFile(t, path), "the file is exactly as before")

					mustAppend(t, s, "r", testLine)
					want := seed.content + testLine
					if seed.content == torn {
						want = torn + "\n" + testLine
					}
					assert.Equal(t, want, readFile(t, path), "the next append works")
				})
			}
		})
	}
}

// The store's contract holds even when the writer ignores what emit returned (AppendStream's doc:
// "a line that breaks this ... or a failed emit fails the whole commit"): a refused piece or a
// failed write still fails the call, and nothing of the line stays in the file.
func TestAppendStreamWriterIgnoringEmitErrors(t *testing.T) {
	tests := []struct {
		name   string
		hook   func(string, int) (int, error) // WithWriteHook, when set
		pieces [][]byte
		wantIs error
	}{
		{name: "inner newline, then a valid line", pieces: [][]byte{[]byte("{\"a\":\n1}\n"), []byte(`{"b":2}` + "\n")}},
		{name: "not an object, then a valid line", pieces: [][]byte{[]byte("[1]"), []byte(`{"b":2}` + "\n")}},
		{name: "valid line, then a second record", pieces: [][]byte{[]byte(`{"b":2}` + "\n"), []byte(`{"c":3}` + "\n")}},
		{name: "write hook ENOSPC after 4 bytes", hook: func(string, int) (int, error) { return 4, unix.ENOSPC },
			pieces: [][]byte{[]byte(`{"b":`), []byte(`2}` + "\n")}, wantIs: unix.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []StoreOption
			if tt.hook != nil {
				opts = append(opts, WithWriteHook(tt.hook))
			}
			s := newTestStore(t, opts...)
			path := seedFile(t, s, "r", testLine)
			var emitErrs []error
			err := s.AppendStream(t.Context(), "r", 64, func(emit func([]byte) error) error {
				for _, p := range tt.pieces {
					if err := emit(p); err != nil {
						emitErrs = append(emitErrs, err) // ignored, as a careless writer would
					}
				}
				return nil
			})
			require.NotEmpty(t, emitErrs, "emit refused a piece")
			assert.Error(t, err, "a refused piece must fail the call (emit errors: %v)", emitErrs)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.Equal(t, testLine, readFile(t, path), "nothing of the refused line stays in the file")
		})
	}
}

// A real full file system (a tmpfs of 64 KiB) under a streamed line: the call fails with ENOSPC
// and nothing partial stays, whether the writer passes emit's error on or (carelessly) ignores it.
func TestAppendStreamFullFileSystem(t *testing.T) {
	tests := []struct {
		name   string
		ignore bool // the writer ignores emit's errors
	}{
		{name: "writer returns emit's error"},
		{name: "writer ignores emit's error", ignore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, whyNot := mountTmpfs(t, "size=64k,mode=0700")
			if whyNot != "" {
				t.Logf("tmpfs variant not run: %s (TestAppendStreamWriteHookENOSPC covers the returning writer)", whyNot)
				return
			}
			s, err := NewStore(filepath.Join(dir, "caps"))
			require.NoError(t, err)
			mustAppend(t, s, "full", testLine)
			f, err := os.Create(filepath.Join(dir, "filler"))
			require.NoError(t, err)
			// Leave about 8 KiB free: the first pieces fit, the rest of the line does not.
			block := make([]byte, 4096)
			for {
				if _, err := f.Write(block); err != nil {
					require.ErrorIs(t, err, unix.ENOSPC)
					break
				}
			}
			require.NoError(t, f.Truncate(mustSize(t, f)-8<<10))
			require.NoError(t, f.Close())

			line := paddedLine("big", 200<<10)
			var emitErrs []error
			err = s.AppendStream(t.Context(), "full", len(line), func(emit func([]byte) error) error {
				for _, p := range splitLine(line, 4<<10) {
					if err := emit(p); err != nil {
						emitErrs = append(emitErrs, err)
						if !tt.ignore {
							return err
						}
					}
				}
				return nil
			})
			require.NotEmpty(t, emitErrs, "the disk filled up under the line")
			assert.ErrorIs(t, emitErrs[0], unix.ENOSPC)
			path, _ := s.CapturePath("full")
			assert.ErrorIs(t, err, unix.ENOSPC, "the call reports the full disk")
			got := readFile(t, path)
			assert.True(t, got == testLine, "no partial line left behind: the file has %d bytes, %q…",
				len(got), got[:min(len(got), 60)])
		})
	}
}

// mustSize returns f's size.
func mustSize(t *testing.T, f *os.File) int64 {
	t.Helper()
	st, err := f.Stat()
	require.NoError(t, err)
	return st.Size()
}

// A streamed request shares its commit with the Appends queued around it: in queue order when the
// commit succeeds; when the streamed line fails, every request of the commit fails and nothing of
// the batch stays in the file.
func TestAppendStreamInGroupCommit(t *testing.T) {
	boom := errors.New("writer failed")
	big := paddedLine("streamed", 300<<10)
	tests := []struct {
		name       string
		write      func(emit func([]byte) error) error
		wantFailed bool
		wantIs     error
	}{
		{name: "streamed line succeeds", write: emitAll(splitLine(big, LinePieceBytes)...)},
		{name: "writer fails mid-line", write: func(emit func([]byte) error) error {
			if err := emitAll(splitLine(big[:200<<10], LinePieceBytes)...)(emit); err != nil {
				return err
			}
			return boom
		}, wantFailed: true, wantIs: boom},
		{name: "inner newline mid-line", write: emitAll(big[:200<<10], []byte("\n"), big[200<<10:]), wantFailed: true},
		{name: "no final newline", write: emitAll(big[:len(big)-1]), wantFailed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var commits atomic.Int32
			entered, release := make(chan struct{}), make(chan struct{})
			s := newTestStore(t, WithSyncHook(func(string) error {
				if commits.Add(1) == 1 {
					close(entered)
					<-release
				}
				return nil
			}))
			path := seedFile(t, s, "r", "")
			first := paddedLine("first", 100)
			before, after := paddedLine("before", 70<<10), paddedLine("after", 50)
			var wg sync.WaitGroup
			var firstErr, beforeErr, streamErr, afterErr error
			wg.Go(func() { firstErr = s.Append(t.Context(), "r", first) })
			<-entered
			wg.Go(func() { beforeErr = s.Append(t.Context(), "r", before) })
			waitPending(t, s, path, 1)
			wg.Go(func() { streamErr = s.AppendStream(t.Context(), "r", len(big), tt.write) })
			waitPending(t, s, path, 2)
			wg.Go(func() { afterErr = s.Append(t.Context(), "r", after) })
			waitPending(t, s, path, 3)
			close(release)
			wg.Wait()

			require.NoError(t, firstErr)
			if !tt.wantFailed {
				require.NoError(t, errors.Join(beforeErr, streamErr, afterErr))
				assert.Equal(t, int32(2), commits.Load(), "the three requests share one commit")
				assert.Equal(t, string(first)+string(before)+string(big)+string(after), readFile(t, path), "queue order")
				return
			}
			for name, err := range map[string]error{"before": beforeErr, "streamed": streamErr, "after": afterErr} {
				require.Error(t, err, "%s shares the failed commit", name)
				assert.Contains(t, err.Error(), "capture append r:", name)
				if tt.wantIs != nil {
					assert.ErrorIs(t, err, tt.wantIs, name)
				}
			}
			assert.Equal(t, string(first), readFile(t, path), "no line of the failed commit stays")
			mustAppend(t, s, "r", testLine)
			assert.Equal(t, string(first)+testLine, readFile(t, path))
		})
	}
}

// A disk that fills up during a streamed line (WithWriteHook): the call fails with ENOSPC, the
// writer's emit reports it, and the file is cut back. The hook sees the size hint.
func TestAppendStreamWriteHookENOSPC(t *testing.T) {
	line, spanLine := spanRecordLine(t, 300<<10)
	hint := spanLine.SizeHint()
	const torn = `{"model_call_id":"x","dia`
	tests := []struct {
		name         string
		seed         string
		keep         func(size int) int // bytes the "disk" accepts before ENOSPC
		wantEmitFail bool               // the writer's emit sees the error
	}{
		{name: "nothing written", seed: testLine, keep: func(int) int { return 0 }, wantEmitFail: true},
		{name: "first bytes written", seed: testLine, keep: func(int) int { return 10 }, wantEmitFail: true},
		{name: "half the hint written", seed: testLine, keep: func(n int) int { return n / 2 }, wantEmitFail: true},
		{name: "two pieces and a bit written", seed: "", keep: func(int) int { return 2*LinePieceBytes + 3 }, wantEmitFail: true},
		{name: "all but the newline written", seed: testLine, keep: func(int) int { return len(line) - 1 }, wantEmitFail: true},
		{name: "more than the hint allowed, error anyway", seed: testLine, keep: func(n int) int { return n + 10 }, wantEmitFail: hint < len(line)},
		{name: "D7 repair newline written, then full", seed: torn, keep: func(int) int { return 1 }, wantEmitFail: true},
		{name: "negative count", seed: testLine, keep: func(int) int { return -5 }, wantEmitFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fail atomic.Bool
			var sizes []int
			s := newTestStore(t, WithWriteHook(func(_ string, size int) (int, error) {
				sizes = append(sizes, size)
				if fail.Load() {
					return tt.keep(size), unix.ENOSPC
				}
				return 0, nil
			}))
			path := seedFile(t, s, "r", tt.seed)
			var emitErr error
			write := func(emit func([]byte) error) error {
				_, err := spanLine.WriteTo(nil, func(p []byte) error {
					err := emit(p)
					if err != nil && emitErr == nil {
						emitErr = err
					}
					return err
				})
				return err
			}

			fail.Store(true)
			err := s.AppendStream(t.Context(), "r", hint, write)
			require.ErrorIs(t, err, unix.ENOSPC)
			assert.Contains(t, err.Error(), path, "the error names the file")
			if tt.wantEmitFail {
				assert.ErrorIs(t, emitErr, unix.ENOSPC, "emit reports the full disk")
			}
			require.Equal(t, tt.seed, readFile(t, path), "the partial write was cut back")

			fail.Store(false)
			require.NoError(t, s.AppendStream(t.Context(), "r", hint, write))
			want := tt.seed + string(line)
			wantSize := hint
			if tt.seed == torn {
				want = torn + "\n" + string(line)
				wantSize++ // the repair newline
			}
			assert.Equal(t, want, readFile(t, path))
			assert.Equal(t, []int{wantSize, wantSize}, sizes, "the hook sees the size hint (plus the repair newline)")
		})
	}
	t.Run("a wrong hint does not matter when the hook lets the commit through", func(t *testing.T) {
		for _, h := range []int{0, 1, len(line) / 3, 10 * len(line)} {
			var sizes []int
			s := newTestStore(t, WithWriteHook(func(_ string, size int) (int, error) {
				sizes = append(sizes, size)
				return 0, nil
			}))
			path := seedFile(t, s, "r", "")
			require.NoError(t, s.AppendStream(t.Context(), "r", h, emitAll(splitLine(line, LinePieceBytes)...)))
			assert.Equal(t, string(line), readFile(t, path))
			assert.Equal(t, []int{h}, sizes)
		}
	})
	t.Run("negative hint counts as zero", func(t *testing.T) {
		var sizes []int
		s := newTestStore(t, WithWriteHook(func(_ string, size int) (int, error) {
			sizes = append(sizes, size)
			return 0, nil
		}))
		require.NoError(t, s.AppendStream(t.Context(), "r", -100, emitAll([]byte(testLine))))
		assert.Equal(t, []int{0}, sizes)
	})
}

// SPEC §0 D7: a streamed line after a torn tail starts on a line of its own.
func TestAppendStreamRepairsTornTail(t *testing.T) {
	line, _ := spanRecordLine(t, 150<<10)
	const torn = `{"model_call_id":"x","dia`
	tests := []struct {
		name, seed  string
		wantRepair  bool
		wantInvalid int
	}{
		{name: "torn tail gets a newline", seed: torn, wantRepair: true, wantInvalid: 1},
		{name: "trailing spaces are not a newline", seed: `{"z":0}  `, wantRepair: true},
		{name: "complete tail untouched", seed: `{"z":0}` + "\n"},
		{name: "empty file untouched", seed: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			path := seedFile(t, s, "r", tt.seed)
			require.NoError(t, s.AppendStream(t.Context(), "r", len(line), emitAll(splitLine(line, LinePieceBytes)...)))
			want := tt.seed + string(line)
			if tt.wantRepair {
				want = tt.seed + "\n" + string(line)
			}
			require.Equal(t, want, readFile(t, path))
			lines, invalid, err := s.ReadAvailable("r")
			require.NoError(t, err)
			assert.Equal(t, tt.wantInvalid, invalid)
			require.NotEmpty(t, lines)
			assert.Equal(t, string(line[:len(line)-1]), string(lines[len(lines)-1].Line))
		})
	}
}

// What Append refuses before any I/O, AppendStream refuses too, without calling write.
func TestAppendStreamRefusesBeforeIO(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		id      string
		nilFunc bool
		wantIs  error
		wantMsg string
	}{
		{name: "invalid rollout id", ctx: t.Context(), id: "a/b", wantIs: ErrInvalidRolloutID, wantMsg: "Invalid rollout id: 'a/b'"},
		{name: "empty rollout id", ctx: t.Context(), id: "", wantIs: ErrInvalidRolloutID},
		{name: "cancelled context", ctx: cancelled, id: "r", wantIs: context.Canceled},
		{name: "nil writer", ctx: t.Context(), id: "r", nilFunc: true, wantMsg: "nil line writer"},
		{name: "nil writer and cancelled context", ctx: cancelled, id: "r", nilFunc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hookCalls atomic.Int32
			s := newTestStore(t, WithWriteHook(func(string, int) (int, error) { hookCalls.Add(1); return 0, nil }))
			calls := 0
			write := func(emit func([]byte) error) error { calls++; return emit([]byte(testLine)) }
			if tt.nilFunc {
				write = nil
			}
			err := s.AppendStream(tt.ctx, tt.id, 10, write)
			require.Error(t, err)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			if tt.wantMsg != "" {
				assert.Contains(t, err.Error(), tt.wantMsg)
			}
			assert.Zero(t, calls, "write never called")
			assert.Zero(t, hookCalls.Load(), "no commit")
			entries, err := os.ReadDir(s.Dir())
			require.NoError(t, err)
			assert.Empty(t, entries, "no file created")
		})
	}
	t.Run("a detached context still writes", func(t *testing.T) {
		s := newTestStore(t)
		require.NoError(t, s.AppendStream(context.WithoutCancel(cancelled), "r", 10, emitAll([]byte(testLine))))
		path, _ := s.CapturePath("r")
		assert.Equal(t, testLine, readFile(t, path))
	})
}
