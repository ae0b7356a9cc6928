package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// Issue 7 part 3: bad input never panics the proxy, never writes outside the capture directory, and
// every record it writes is readable by the tolerant reader.

// panicGuard serves h and counts the panics that are not http.ErrAbortHandler (the proxy's
// deliberate way to abort a response); it re-panics with ErrAbortHandler so the connection still
// breaks as the proxy meant.
type panicGuard struct {
	h      http.Handler
	mu     sync.Mutex
	panics []string
}

func (g *panicGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				g.mu.Lock()
				g.panics = append(g.panics, fmt.Sprintf("%s %q: %v", r.Method, r.RequestURI, v))
				g.mu.Unlock()
			}
			panic(http.ErrAbortHandler)
		}
	}()
	g.h.ServeHTTP(w, r)
}

func (g *panicGuard) check(t testing.TB) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Empty(t, g.panics, "the proxy panicked")
}

// scriptedUpstream answers each request with the script registered under its X-Script header
// (default: a small chat completion).
type scriptedUpstream struct {
	scripts sync.Map // name -> func(w, r)
	calls   atomic.Int64
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	if f, ok := u.scripts.Load(r.Header.Get("X-Script")); ok {
		f.(func(http.ResponseWriter, *http.Request))(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
}

// badInputEnv is a guarded proxy whose capture directory is root/caps.
type badInputEnv struct {
	root, caps string
	store      *capture.Store
	guard      *panicGuard
	up         *scriptedUpstream
	srv        *httptest.Server
	client     *http.Client
}

func newBadInputEnv(t testing.TB, opts ...Option) *badInputEnv {
	t.Helper()
	root := t.TempDir()
	e := &badInputEnv{root: root, caps: filepath.Join(root, "caps"), up: &scriptedUpstream{}}
	upSrv := httptest.NewServer(e.up)
	t.Cleanup(func() { upSrv.CloseClientConnections(); upSrv.Close() })
	store, err := capture.NewStore(e.caps)
	require.NoError(t, err)
	e.store = store
	h, err := New(upSrv.URL, append([]Option{WithStore(store), WithLogger(newTextLogger(io.Discard))}, opts...)...)
	require.NoError(t, err)
	e.guard = &panicGuard{h: h}
	e.srv = httptest.NewServer(e.guard)
	e.client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(func() {
		e.client.CloseIdleConnections()
		e.srv.CloseClientConnections()
		e.srv.Close()
		require.NoError(t, h.Shutdown(context.Background()))
	})
	return e
}

// raw sends request bytes on a new connection and returns the response status (0 when the server
// closed the connection without one).
func (e *badInputEnv) raw(t testing.TB, request string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = io.WriteString(conn, request)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// checkTree walks the temp root: nothing outside the capture directory, only capture files and
// markers of valid ids inside it, every capture file fully readable by the tolerant reader.
func (e *badInputEnv) checkTree(t testing.TB) {
	t.Helper()
	e.guard.check(t)
	err := filepath.WalkDir(e.root, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		switch {
		case path == e.root || path == e.caps:
			require.True(t, d.IsDir(), path)
			return nil
		case filepath.Dir(path) != e.caps:
			t.Errorf("file outside the capture directory: %s", path)
			return nil
		}
		require.True(t, d.Type().IsRegular(), "%s is a regular file", path)
		name := d.Name()
		id, isCapture := strings.CutSuffix(name, capture.CaptureFileSuffix)
		if !isCapture {
			var isMarker bool
			id, isMarker = strings.CutSuffix(name, capture.MarkerFileSuffix)
			require.True(t, isMarker, "unexpected file %q", name)
		}
		require.NoError(t, rollout.ValidateID(id), "file of an id the proxy must refuse: %q", name)
		if isCapture {
			lines, invalid, err := e.store.ReadAvailable(id)
			require.NoError(t, err)
			require.Zero(t, invalid, "%s: every line readable", name)
			_, invalid, err = e.store.ReadAvailableModelCallRecords(id)
			require.NoError(t, err)
			require.Zero(t, invalid, "%s: every record derivable", name)
			require.NotEmpty(t, lines)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestProxyBadRolloutIDs: path traversal, separators, NUL, look-alikes and oversized ids in the
// prefix, the header and the baggage are refused (SPEC §0 D12) and never become a path.
func TestProxyBadRolloutIDs(t *testing.T) {
	e := newBadInputEnv(t)
	const body = `{"model":"m","messages":[]}`
	request := func(target string, hdr ...string) string {
		return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + strings.Join(hdr, "") +
			fmt.Sprintf("Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	}
	const chat = "/v1/chat/completions"
	tests := []struct {
		name   string
		req    string
		status int // 0: the HTTP layer may refuse it any way it likes (checked only for no panic and no file)
	}{
		{"dot dot", request("/ng-rollout/.." + chat), 400},
		{"single dot", request("/ng-rollout/." + chat), 400},
		{"encoded dot dot", request("/ng-rollout/%2e%2e" + chat), 400},
		{"encoded traversal", request("/ng-rollout/..%2F..%2Fetc%2Fpasswd" + chat), 400},
		{"encoded slash inside the id", request("/ng-rollout/a%2F..%2F..%2Fb" + chat), 400}, // SPEC §0 D12: the raw id segment holds %2F
		{"double-encoded slash", request("/ng-rollout/a%252F..%252Fb" + chat), 400},
		{"encoded backslash", request("/ng-rollout/..%5C..%5Cx" + chat), 400},
		{"encoded NUL", request("/ng-rollout/a%00b" + chat), 400},
		{"raw NUL", request("/ng-rollout/a\x00b" + chat), 0},
		{"encoded newline (D10)", request("/ng-rollout/ab%0A" + chat), 400},
		{"one dot leader look-alike", request("/ng-rollout/%E2%80%A4%E2%80%A4" + chat), 400},
		{"fullwidth solidus", request("/ng-rollout/a%EF%BC%8Fb" + chat), 400},
		{"division slash", request("/ng-rollout/a%E2%88%95b" + chat), 400},
		{"zero-width space", request("/ng-rollout/ab%E2%80%8B" + chat), 400},
		{"cyrillic a", request("/ng-rollout/%D0%B0bc" + chat), 400},
		{"raw UTF-8", request("/ng-rollout/r\xc3\xb6llout" + chat), 400},
		{"invalid UTF-8", request("/ng-rollout/a%FF%FEb" + chat), 400},
		{"leading dash", request("/ng-rollout/-rf" + chat), 400},
		{"201 bytes", request("/ng-rollout/" + strings.Repeat("a", rollout.MaxIDBytes+1) + chat), 400},
		{"64 KiB", request("/ng-rollout/" + strings.Repeat("b", 64<<10) + chat), 400},
		{"200 bytes is accepted", request("/ng-rollout/" + strings.Repeat("c", rollout.MaxIDBytes) + chat), 200},
		{"empty id", request("/ng-rollout//v1/chat/completions"), 0},
		{"traversal after a valid id", request("/ng-rollout/ok/../../v1/chat/completions"), 400}, // SPEC §0 D12: dot segments
		{"absolute path as id", request("/ng-rollout/%2Fetc%2Fpasswd" + chat), 0},
		{"header traversal", request(chat, "X-Gymtrace-Rollout-Id: ../../etc/x\r\n"), 400},
		{"header slash", request(chat, "X-Gymtrace-Rollout-Id: a/b\r\n"), 400},
		{"header percent", request(chat, "X-Gymtrace-Rollout-Id: a%2Fb\r\n"), 400},
		{"header look-alike", request(chat, "X-Gymtrace-Rollout-Id: a\xe2\x88\x95b\r\n"), 400},
		{"header twice", request(chat, "X-Gymtrace-Rollout-Id: a\r\nX-Gymtrace-Rollout-Id: a\r\n"), 400},
		{"header empty", request(chat, "X-Gymtrace-Rollout-Id: \r\n"), 400},
		{"header NUL", request(chat, "X-Gymtrace-Rollout-Id: a\x00b\r\n"), 0},
		{"baggage traversal", request(chat, "Baggage: gymtrace.rollout_id=..%2F..%2Fx\r\n"), 400},
		{"baggage NUL", request(chat, "Baggage: gymtrace.rollout_id=a%00b\r\n"), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.raw(t, tt.req)
			if tt.status != 0 {
				assert.Equal(t, tt.status, got)
			}
			e.checkTree(t)
		})
	}
	entries, err := os.ReadDir(e.caps)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the 200-byte id was captured")
	assert.Equal(t, strings.Repeat("c", rollout.MaxIDBytes)+capture.CaptureFileSuffix, entries[0].Name())
}

// TestProxyBadPayloads: odd request and response bodies are forwarded unchanged and recorded
// readably (SPEC §0 D2, D6).
func TestProxyBadPayloads(t *testing.T) {
	huge := func(n int) string { return strings.Repeat("x", n) }
	nested := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	nestedOK := strings.Repeat(`{"a":`, capture.PayloadMaxDepth-1) + "1" + strings.Repeat("}", capture.PayloadMaxDepth-1)
	event8M := "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + huge(8<<20) + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	tests := []struct {
		name        string
		path        string
		request     string
		contentType string // upstream's; "" uses the default upstream answer
		response    string
		check       func(t *testing.T, rec map[string]any, line string)
	}{
		{name: "request not JSON", request: "hello, world",
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["request"])
				assert.Equal(t, "hello, world", rec["request_raw"])
			}},
		{name: "request invalid UTF-8", request: "{\"model\":\"m\",\"x\":\"\xff\xfe\"}",
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["request"])
				assert.Equal(t, "{\"model\":\"m\",\"x\":\"\ufffd\ufffd\"}", rec["request_raw"])
			}},
		{name: "request 10 MiB JSON line", request: `{"model":"m","input":"` + huge(10<<20) + `"}`,
			check: func(t *testing.T, rec map[string]any, line string) {
				assert.Greater(t, len(line), 10<<20)
				assert.Len(t, rec["request"].(map[string]any)["input"], 10<<20)
			}},
		{name: "request nested beyond the payload depth", request: nested,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["request"])
				assert.Equal(t, nested, rec["request_raw"])
			}},
		{name: "request nested at the payload depth", request: nestedOK,
			check: func(t *testing.T, rec map[string]any, line string) {
				assert.NotNil(t, rec["request"])
				assert.Contains(t, line, `"request":`+nestedOK)
			}},
		{name: "request duplicate keys kept as sent", request: `{"model":"a","model":"b","stream":false}`,
			check: func(t *testing.T, _ map[string]any, line string) {
				assert.Contains(t, line, `"request":{"model":"a","model":"b","stream":false}`)
			}},
		{name: "request NaN", request: `{"model":"m","t":NaN}`,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["request"])
				assert.Equal(t, `{"model":"m","t":NaN}`, rec["request_raw"])
			}},
		{name: "response not JSON", contentType: "application/json", response: "<html>oops</html>",
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Equal(t, "capture_parse_error", rec["error_category"])
				assert.Equal(t, "<html>oops</html>", rec["response_raw"])
			}},
		{name: "response invalid UTF-8", contentType: "application/json", response: "{\"id\":\"\xc3\x28\"}",
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Equal(t, "capture_parse_error", rec["error_category"])
				assert.Equal(t, "{\"id\":\"\ufffd(\"}", rec["response_raw"])
			}},
		{name: "response 10 MiB JSON line", contentType: "application/json", response: `{"id":"r","output_text":"` + huge(10<<20) + `"}`,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["error_category"])
				assert.Len(t, rec["response"].(map[string]any)["output_text"], 10<<20)
			}},
		{name: "response deeply nested", contentType: "application/json", response: nested,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Equal(t, "capture_parse_error", rec["error_category"])
				assert.Equal(t, nested, rec["response_raw"])
			}},
		{name: "response duplicate keys", contentType: "application/json", response: `{"id":"a","id":"b"}`,
			check: func(t *testing.T, _ map[string]any, line string) {
				assert.Contains(t, line, `"response":{"id":"a","id":"b"}`)
			}},
		{name: "SSE with an 8 MiB line", contentType: "text/event-stream", response: event8M,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Nil(t, rec["error_category"])
				assert.Equal(t, event8M, rec["response_raw"])
				msg := rec["response"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
				assert.Len(t, msg["content"], 8<<20)
			}},
		{name: "JSON labelled SSE", contentType: "text/event-stream", response: `{"id":"c1","choices":[]}`,
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Equal(t, "stream_truncated", rec["error_category"])
				assert.Equal(t, `{"id":"c1","choices":[]}`, rec["response_raw"])
			}},
		{name: "binary labelled SSE", contentType: "text/event-stream", response: "\x00\x01\xff\r\r\n\ndata: \xfe\n\n",
			check: func(t *testing.T, rec map[string]any, _ string) {
				assert.Equal(t, "stream_truncated", rec["error_category"])
				assert.Equal(t, "\x00\x01\ufffd\r\r\n\ndata: \ufffd\n\n", rec["response_raw"])
			}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newBadInputEnv(t)
			id := fmt.Sprintf("bad-%d", i)
			script := id
			if tt.contentType != "" {
				e.up.scripts.Store(script, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", tt.contentType)
					_, _ = io.WriteString(w, tt.response)
				})
			}
			req := tt.request
			if req == "" {
				req = chatRequest
			}
			hr, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+"/ng-rollout/"+id+"/v1/chat/completions", strings.NewReader(req))
			require.NoError(t, err)
			hr.Header.Set("X-Script", script)
			resp, err := e.client.Do(hr)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			if tt.contentType != "" {
				assert.True(t, bytes.Equal([]byte(tt.response), got), "the client gets the upstream's exact bytes")
			}
			e.checkTree(t)
			data, err := os.ReadFile(filepath.Join(e.caps, id+capture.CaptureFileSuffix))
			require.NoError(t, err)
			line := string(data)
			require.Equal(t, 1, strings.Count(line, "\n"), "one record, one line")
			rec := decodeLine(t, line)
			tt.check(t, rec, line)
		})
	}
}

// decodeLine decodes one capture line into a map (numbers as json.Number).
func decodeLine(t *testing.T, line string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var m map[string]any
	require.NoError(t, d.Decode(&m))
	return m
}

// TestProxyLyingContentLength: a client or upstream whose Content-Length disagrees with its body
// never panics the proxy nor leaves an unreadable record.
func TestProxyLyingContentLength(t *testing.T) {
	e := newBadInputEnv(t, WithRequestReadTimeout(300*time.Millisecond))
	upstreamLies := map[string]string{
		"upstream declares more": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":\"short\"}",
		"upstream declares less": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"id\":\"longer than five\"}",
	}
	for name, raw := range upstreamLies {
		e.up.scripts.Store(name, func(w http.ResponseWriter, _ *http.Request) { writeRawAndClose(w, raw) })
	}
	tests := []struct {
		name string
		req  string
	}{
		{"client declares more and stalls", "POST /ng-rollout/cl-more/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":\"m\"}"},
		{"client declares less", "POST /ng-rollout/cl-less/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"model\":\"m\"}GARBAGE\r\n\r\n"},
		{"client declares a negative length", "POST /ng-rollout/cl-neg/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}"},
		{"client declares two lengths", "POST /ng-rollout/cl-two/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
		{"client declares a huge length", "POST /ng-rollout/cl-huge/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n{}"},
		{"upstream declares more", "POST /ng-rollout/up-more/v1/responses HTTP/1.1\r\nHost: x\r\nX-Script: upstream declares more\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"},
		{"upstream declares less", "POST /ng-rollout/up-less/v1/responses HTTP/1.1\r\nHost: x\r\nX-Script: upstream declares less\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = e.raw(t, tt.req)
			e.checkTree(t)
		})
	}
	rec := func(id string) map[string]any {
		data, err := os.ReadFile(filepath.Join(e.caps, id+capture.CaptureFileSuffix))
		require.NoError(t, err)
		return decodeLine(t, string(data))
	}
	assert.Equal(t, "connection", rec("up-more")["error_category"], "a body shorter than declared is a break")
	assert.Nil(t, rec("up-more")["response"], "what arrived is no response the upstream sent whole, even when it parses (§4.7)")
	assert.Equal(t, `{"id":"short"}`, rec("up-more")["response_raw"], "what arrived, as received")
	assert.Equal(t, `{"id"`, rec("up-less")["response_raw"], "only the declared length is the body")
	assert.Equal(t, `{"mod`, rec("cl-less")["request_raw"], "only the declared length is the request")
}

// FuzzProxyRolloutID: any rollout id, in the path or the header, with any request body: no panic, a
// refused id gets 400 and no file, an accepted one gets exactly one readable record, and nothing is
// ever written outside the capture directory.
func FuzzProxyRolloutID(f *testing.F) {
	for _, s := range []string{"..", "a/b", "ok-1", "%2F", "a\x00b", "r\u2024\u2024", strings.Repeat("z", 201), "-x", ".", "a b"} {
		f.Add(s, []byte(`{"model":"m"}`), false)
		f.Add(s, []byte("\xff{"), true)
	}
	e := newBadInputEnv(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, id string, body []byte, viaHeader bool) {
		script := fmt.Sprint(n.Add(1))
		target := e.srv.URL + "/ng-rollout/" + url.PathEscape(id) + "/v1/chat/completions"
		if viaHeader {
			target = e.srv.URL + "/v1/chat/completions"
		}
		req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Script", script)
		effective := id // the id the proxy sees
		if viaHeader {
			if !validHeaderValue(id) {
				return // net/http refuses to send it
			}
			req.Header.Set(rollout.Header, id)
			effective = strings.Trim(id, " \t") // net/textproto trims a header value
		}
		idOK := rollout.ValidateID(effective) == nil
		beforeLines := 0
		if idOK {
			lines, _, err := e.store.ReadAvailable(effective)
			require.NoError(t, err)
			beforeLines = len(lines)
		}
		resp, err := e.client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		e.guard.check(t)
		switch {
		case idOK:
			require.Equal(t, http.StatusOK, resp.StatusCode)
			lines, invalid, err := e.store.ReadAvailable(effective)
			require.NoError(t, err)
			require.Zero(t, invalid)
			require.Len(t, lines, beforeLines+1)
		case !viaHeader && (id == "" || strings.Contains(id, "/")):
			// No prefix, or the decoded path splits the id: what is left is refused or not captured.
		default:
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "id %q", id)
		}
		entries, err := os.ReadDir(e.root)
		require.NoError(t, err)
		require.Len(t, entries, 1, "only the capture directory in the root")
		require.Equal(t, "caps", entries[0].Name())
		for _, ent := range mustReadDir(t, e.caps) {
			id, ok := strings.CutSuffix(ent.Name(), capture.CaptureFileSuffix)
			require.True(t, ok, "only capture files: %q", ent.Name())
			require.NoError(t, rollout.ValidateID(id))
		}
	})
	f.Cleanup(func() { e.checkTree(f) })
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return entries
}

// validHeaderValue reports whether net/http sends v as a header value: no control character but
// horizontal tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
