package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/semconv"
)

// Issue 7 part 1: upstream and storage faults. The client always gets what the upstream sent (or a
// break it cannot mistake for a clean end), and every call leaves either an intact record or the
// rollout's .capture.incomplete marker plus a counted, logged loss.

// dialectCase is one of the three captured dialects with a small request fakemodel answers.
type dialectCase struct {
	dialect fakemodel.Dialect
	path    string
	request string // streaming request
}

var dialectCases = []dialectCase{
	{fakemodel.DialectResponses, "/v1/responses", `{"model":"gpt-4.1-mini","stream":true,"input":"tell me a story about a fault"}`},
	{fakemodel.DialectChat, "/v1/chat/completions", `{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"tell me a story about a fault"}]}`},
	{fakemodel.DialectMessages, "/v1/messages", `{"model":"claude-haiku-4-5","max_tokens":512,"stream":true,"messages":[{"role":"user","content":"tell me a story about a fault"}]}`},
}

// nonStreaming returns the request without "stream":true.
func (d dialectCase) nonStreaming() string {
	return strings.Replace(d.request, `"stream":true,`, "", 1)
}

// readAllCapture checks that rollout id's file is fully readable by the tolerant reader (no damaged
// line, every record derivable) and returns its records.
func readAllCapture(t *testing.T, s *capture.Store, id string) []capture.ModelCallRecord {
	t.Helper()
	lines, invalid, err := s.ReadAvailable(id)
	require.NoError(t, err)
	require.Zero(t, invalid, "every line readable")
	records, invalid, err := s.ReadAvailableModelCallRecords(id)
	require.NoError(t, err)
	require.Zero(t, invalid, "every record derivable")
	require.Len(t, records, len(lines))
	return records
}

func TestProxyUpstreamResetMidStream(t *testing.T) {
	for _, dc := range dialectCases {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", dc.dialect, stream), func(t *testing.T) {
				fm := fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault {
					return fakemodel.Fault{Cut: fakemodel.CutAbort, CutAfter: 2}
				}))
				up := newUpstream(t, fm.ServeHTTP)
				env := newProxyEnv(t, up.URL, nil)
				body := dc.request
				if !stream {
					body = dc.nonStreaming()
				}
				resp, got, err := env.post(t, "/ng-rollout/reset"+dc.path, body, nil)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				require.Error(t, err, "the client sees the break, never a clean end")
				require.NotEmpty(t, got)
				rec := env.record(t, "reset")
				assert.Equal(t, "connection", rec["error_category"])
				assert.Equal(t, json.Number("200"), rec["status_code"])
				assert.Equal(t, string(got), rec["response_raw"], "the record holds exactly the bytes the client got")
				readAllCapture(t, env.store, "reset")
				inc, err := env.store.IsIncomplete("reset")
				require.NoError(t, err)
				assert.False(t, inc, "the record is whole: it tells what happened")
			})
		}
	}
	t.Run("TCP RST after a partial sized JSON body", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":\"resp_1\",")
			_ = buf.Flush()
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		})
		env := newProxyEnv(t, up.URL, nil)
		_, got, err := env.post(t, "/ng-rollout/rst/v1/responses", `{"model":"m"}`, nil)
		require.Error(t, err)
		assert.Equal(t, `{"id":"resp_1",`, string(got))
		rec := env.record(t, "rst")
		assert.Equal(t, "connection", rec["error_category"])
		assert.Nil(t, rec["response"])
		assert.Equal(t, `{"id":"resp_1",`, rec["response_raw"])
	})
}

// TestProxyUpstreamStall: an upstream that stops sending (before the first body byte or mid-stream)
// is given up after the idle read timeout: the client's response is aborted, the upstream request
// cancelled, and the record says timeout.
func TestProxyUpstreamStall(t *testing.T) {
	tests := []struct {
		name  string
		first string // what the upstream sends before it stalls
	}{
		{name: "after the status line", first: ""},
		{name: "mid-stream", first: chatEvent1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstreamDone := make(chan struct{})
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				defer close(upstreamDone)
				sseHeaders(w)
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, tt.first)
				flush(w)
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
			})
			env := newProxyEnv(t, up.URL, nil, WithIdleReadTimeout(150*time.Millisecond))
			start := time.Now()
			resp, got, err := env.post(t, "/ng-rollout/stall/v1/chat/completions", chatRequest, nil)
			require.Error(t, err, "aborted, not ended")
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tt.first, string(got))
			assert.Less(t, time.Since(start), 10*time.Second, "the stall is bounded by the idle timeout")
			select {
			case <-upstreamDone:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream request was not cancelled")
			}
			rec := env.record(t, "stall")
			assert.Equal(t, "timeout", rec["error_category"])
			assert.Equal(t, json.Number("200"), rec["status_code"])
			if tt.first == "" {
				assert.Nil(t, rec["latency_ttft_ms"])
				assert.NotContains(t, rec, "response_raw")
			} else {
				assert.Equal(t, tt.first, rec["response_raw"])
			}
			readAllCapture(t, env.store, "stall")
		})
	}
	t.Run("default is sensible", func(t *testing.T) {
		assert.Equal(t, 15*time.Minute, DefaultIdleReadTimeout, "longer than any model's pause between tokens, bounded")
		assert.Equal(t, DefaultIdleReadTimeout, newConfig(nil).idleReadTimeout)
		assert.Equal(t, 2*time.Second, newConfig([]Option{WithIdleReadTimeout(2 * time.Second)}).idleReadTimeout)
		assert.Equal(t, DefaultIdleReadTimeout, newConfig([]Option{WithIdleReadTimeout(-1)}).idleReadTimeout)
	})
}

// TestProxyUpstreamErrorStatuses: 5xx and 429 answers with JSON, HTML and empty bodies reach the
// client unchanged and are recorded with their status, category and body.
func TestProxyUpstreamErrorStatuses(t *testing.T) {
	bodies := []struct {
		name, contentType, body string
	}{
		{"JSON", "application/json", `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
		{"HTML", "text/html; charset=utf-8", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body>\r\n</html>\r\n"},
		{"empty", "", ""},
	}
	statuses := []struct {
		code     int
		category string
	}{
		{http.StatusInternalServerError, "upstream_error"},
		{http.StatusBadGateway, "upstream_error"},
		{http.StatusServiceUnavailable, "upstream_error"},
		{529, "upstream_error"},
		{http.StatusTooManyRequests, "rate_limit"},
	}
	for _, dc := range dialectCases {
		for _, st := range statuses {
			for _, b := range bodies {
				t.Run(fmt.Sprintf("%s %d %s", dc.dialect, st.code, b.name), func(t *testing.T) {
					fm := fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault {
						return fakemodel.Fault{Status: st.code, Body: []byte(b.body), ContentType: b.contentType,
							Header: http.Header{"Retry-After": {"1"}}}
					}))
					up := newUpstream(t, fm.ServeHTTP)
					env := newProxyEnv(t, up.URL, nil)
					resp, got, err := env.post(t, "/ng-rollout/err"+dc.path, dc.request, nil)
					require.NoError(t, err)
					assert.Equal(t, st.code, resp.StatusCode)
					assert.Equal(t, b.body, string(got))
					assert.Equal(t, "1", resp.Header.Get("Retry-After"))
					rec := env.record(t, "err")
					assert.Equal(t, json.Number(fmt.Sprint(st.code)), rec["status_code"])
					assert.Equal(t, st.category, rec["error_category"])
					switch b.name {
					case "JSON":
						_, lines := env.records(t, "err")
						assert.Contains(t, lines[0], `"response":`+b.body)
						assert.NotContains(t, rec, "response_raw")
					case "HTML":
						assert.Nil(t, rec["response"])
						assert.Equal(t, b.body, rec["response_raw"])
					default:
						assert.Nil(t, rec["response"])
						assert.NotContains(t, rec, "response_raw")
						assert.Nil(t, rec["latency_ttft_ms"])
					}
					readAllCapture(t, env.store, "err")
					inc, err := env.store.IsIncomplete("err")
					require.NoError(t, err)
					assert.False(t, inc)
				})
			}
		}
	}
}

// TestProxyClientDisconnectMidStream is SPEC §0 D3 for every dialect: the client leaves after the
// first event; the upstream request is cancelled at once (not at the upstream's next write, seconds
// later), and the record says cancelled with the bytes received until then.
func TestProxyClientDisconnectMidStream(t *testing.T) {
	const chunkDelay = 5 * time.Second
	for _, dc := range dialectCases {
		t.Run(string(dc.dialect), func(t *testing.T) {
			fm := fakemodel.New(fakemodel.WithChunkDelay(chunkDelay))
			upstreamEnded := make(chan time.Time, 1)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				fm.ServeHTTP(w, r)
				upstreamEnded <- time.Now()
			})
			env := newProxyEnv(t, up.URL, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+"/ng-rollout/gone"+dc.path, strings.NewReader(dc.request))
			require.NoError(t, err)
			resp, err := env.client.Do(req)
			require.NoError(t, err)
			first := make([]byte, 8)
			_, err = io.ReadFull(resp.Body, first)
			require.NoError(t, err)
			cancelled := time.Now()
			cancel()
			_ = resp.Body.Close()
			select {
			case ended := <-upstreamEnded:
				assert.Less(t, ended.Sub(cancelled), chunkDelay/2, "the upstream request is cancelled promptly")
			case <-time.After(chunkDelay * 3):
				t.Fatal("the upstream request was never cancelled")
			}
			waitFor(t, "the record", func() bool { return len(mustRecords(t, env, "gone")) == 1 })
			rec := env.record(t, "gone")
			assert.Equal(t, "cancelled", rec["error_category"])
			assert.Equal(t, json.Number("200"), rec["status_code"])
			raw, _ := rec["response_raw"].(string)
			assert.True(t, strings.HasPrefix(raw, string(first)), "response_raw holds what was received: %q", raw)
			readAllCapture(t, env.store, "gone")
		})
	}
}

// writeFailures returns how many model-call spans the capture span writer counted as not written
// (gymtrace.capture.writer.spans, outcome failed, or rejected for a file the store refuses; 0 when
// never recorded).
func writeFailures(t *testing.T, r *sdkmetric.ManualReader) int64 {
	t.Helper()
	m, ok := collect(t, r)[semconv.GymtraceCaptureWriterSpansName]
	if !ok {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%T", m.Data)
	var n int64
	for _, dp := range sum.DataPoints {
		if o, _ := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey); o.AsString() == "failed" || o.AsString() == "rejected" {
			n += dp.Value
		}
	}
	return n
}

// mountTmpfs mounts a fresh tmpfs with opts at a new directory and unmounts it at cleanup. It
// returns "" and the reason when this process cannot mount one (not root, no CAP_SYS_ADMIN, a
// container without mount rights); the caller then logs why that variant is not run.
func mountTmpfs(t *testing.T, opts string) (dir, whyNot string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "tmpfs")
	require.NoError(t, os.Mkdir(dir, 0o700))
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return "", "mount -t tmpfs -o " + opts + ": " + err.Error()
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir, ""
}

// fillFileSystem writes a filler file into dir until the file system is full.
func fillFileSystem(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			require.ErrorIs(t, err, unix.ENOSPC)
			return
		}
	}
}

// TestProxyCaptureStorageFaults: when the capture directory is removed, read-only or full, the
// client still gets its whole response, the rollout gets the .capture.incomplete marker wherever
// the marker can be written, and the loss is counted (gymtrace.capture.writer.spans, outcome failed)
// and logged.
func TestProxyCaptureStorageFaults(t *testing.T) {
	dc := dialectCases[1] // chat: the SSE terminal read is held until the write ended
	type fault struct {
		// setup prepares the store (or returns "" plus a reason why the variant cannot run here).
		setup      func(t *testing.T) (store *capture.Store, whyNot string)
		request    string
		wantRecord bool   // the record is written after all (the directory was recreated)
		wantMarker bool   // the marker exists afterwards
		wantLog    string // in the log besides the failure line
	}
	bigRequest := `{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("fill the disk ", 20000) + `"}]}`
	faults := map[string]fault{
		"full: ENOSPC injected mid-write": {
			setup: func(t *testing.T) (*capture.Store, string) {
				return newTestStore(t, capture.WithWriteHook(func(_ string, size int) (int, error) { return size / 2, unix.ENOSPC })), ""
			},
			request: dc.request, wantMarker: true, wantLog: "no space left on device",
		},
		"fsync fails with EIO": {
			setup: func(t *testing.T) (*capture.Store, string) {
				return newTestStore(t, capture.WithSyncHook(func(string) error { return unix.EIO })), ""
			},
			request: dc.request, wantMarker: true, wantLog: "input/output error",
		},
		"full: tmpfs out of space": {
			setup: func(t *testing.T) (*capture.Store, string) {
				dir, whyNot := mountTmpfs(t, "size=256k,mode=0700")
				if whyNot != "" {
					return nil, whyNot
				}
				s, err := capture.NewStore(filepath.Join(dir, "caps"))
				require.NoError(t, err)
				fillFileSystem(t, dir)
				return s, ""
			},
			request: bigRequest, wantMarker: true, wantLog: "no space left on device",
		},
		"full: capture file is /dev/full": {
			setup: func(t *testing.T) (*capture.Store, string) {
				// The store never writes into a device (it opens only regular files, never through a
				// symbolic link), so /dev/full's ENOSPC cannot be reached through it: a capture file
				// that is a link to /dev/full is refused instead, with the same visible outcome.
				s := newTestStore(t)
				p, err := s.CapturePath("fault")
				require.NoError(t, err)
				require.NoError(t, os.Symlink("/dev/full", p))
				return s, ""
			},
			request: dc.request, wantMarker: true, wantLog: "not a regular file",
		},
		"read-only: tmpfs remounted read-only": {
			setup: func(t *testing.T) (*capture.Store, string) {
				dir, whyNot := mountTmpfs(t, "size=1m,mode=0700")
				if whyNot != "" {
					return nil, whyNot
				}
				s, err := capture.NewStore(filepath.Join(dir, "caps"))
				require.NoError(t, err)
				require.NoError(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, "size=1m,mode=0700"))
				return s, ""
			},
			request: dc.request, wantMarker: false, wantLog: "mark incomplete failed",
		},
		"read-only: directory mode 0500": {
			setup: func(t *testing.T) (*capture.Store, string) {
				if os.Geteuid() == 0 {
					return nil, "running as root, which writes into a 0500 directory anyway (the tmpfs variant covers read-only)"
				}
				s := newTestStore(t)
				require.NoError(t, os.Chmod(s.Dir(), 0o500))
				t.Cleanup(func() { _ = os.Chmod(s.Dir(), 0o700) })
				return s, ""
			},
			request: dc.request, wantMarker: false, wantLog: "mark incomplete failed",
		},
		"removed: recreated, nothing lost": {
			setup: func(t *testing.T) (*capture.Store, string) {
				s := newTestStore(t)
				require.NoError(t, os.RemoveAll(s.Dir()))
				return s, ""
			},
			request: dc.request, wantRecord: true,
		},
		"removed and replaced by a file": {
			setup: func(t *testing.T) (*capture.Store, string) {
				s := newTestStore(t)
				require.NoError(t, os.RemoveAll(s.Dir()))
				require.NoError(t, os.WriteFile(s.Dir(), []byte("not a directory"), 0o600))
				return s, ""
			},
			request: dc.request, wantMarker: false, wantLog: "mark incomplete failed",
		},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			store, whyNot := f.setup(t)
			if whyNot != "" {
				t.Logf("variant not run: %s", whyNot)
				return
			}
			up := newUpstream(t, fakemodel.New().ServeHTTP)
			mp, reader := newMetricReader(t)
			env := newProxyEnv(t, up.URL, store, WithMeterProvider(mp))
			resp, body, err := env.post(t, "/ng-rollout/fault"+dc.path, f.request, nil)
			require.NoError(t, err, "the client gets its whole response")
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"), "complete stream: %q", body)

			inc, _ := env.store.IsIncomplete("fault")
			assert.Equal(t, f.wantMarker, inc, "marker")
			logs := env.logs.String()
			if f.wantRecord {
				assert.Len(t, readAllCapture(t, env.store, "fault"), 1)
				assert.Zero(t, writeFailures(t, reader))
				assert.NotContains(t, logs, "record not written")
				return
			}
			assert.Equal(t, int64(1), writeFailures(t, reader), "the loss is counted")
			assert.Contains(t, logs, "record not written; marking the rollout incomplete")
			assert.Contains(t, logs, "rollout_id=fault")
			assert.Contains(t, logs, f.wantLog)
			if f.wantMarker {
				// Whatever reached the file is intact (a failed write is cut back).
				p, _ := env.store.CapturePath("fault")
				if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
					readAllCapture(t, env.store, "fault")
				}
			}
		})
	}
}

// TestProxyCaptureStorageRecovers: after a failed write the next call to the same rollout is
// captured normally once the disk works again; the marker stays (the rollout did lose a record).
func TestProxyCaptureStorageRecovers(t *testing.T) {
	var full atomic.Bool
	store := newTestStore(t, capture.WithWriteHook(func(string, int) (int, error) {
		if full.Load() {
			return 0, unix.ENOSPC
		}
		return 0, nil
	}))
	up := newUpstream(t, fakemodel.New().ServeHTTP)
	env := newProxyEnv(t, up.URL, store)
	for i, f := range []bool{true, false} {
		full.Store(f)
		_, body, err := env.post(t, "/ng-rollout/rec"+dialectCases[0].path, dialectCases[0].request, nil)
		require.NoError(t, err, "call %d", i)
		assert.Contains(t, string(body), "response.completed")
	}
	recs := readAllCapture(t, store, "rec")
	assert.Len(t, recs, 1)
	inc, err := store.IsIncomplete("rec")
	require.NoError(t, err)
	assert.True(t, inc)
}
