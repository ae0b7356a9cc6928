package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// confCase is one folder of testdata/conformance (see its README.md).
type confCase struct {
	name     string
	expected confExpected
	request  []byte
	served   []byte // the exact bytes the upstream sends (upstream.body.gz when present)
	decoded  []byte // the decoded body text (upstream.sse / .json / .body)
	status   int
	headers  map[string]string
	chunking *struct {
		Mode    string `json:"mode"`
		Offsets []int  `json:"offsets"`
		Flush   bool   `json:"flush_between_writes"`
		DelayMS int    `json:"delay_ms_between_writes"`
	}
	upstreamBehavior *testvectors.UpstreamBehavior
	clientBehavior   *struct {
		DisconnectAfterEvents int `json:"disconnect_after_events"`
	}
	requestHeaders map[string]string
}

type confExpected struct {
	Endpoint string `json:"endpoint"`
	Dialect  string `json:"dialect"`
	Client   struct {
		Status                 int   `json:"status"`
		BodyIdenticalToUpstrea *bool `json:"body_identical_to_upstream"`
	} `json:"client"`
	Record            map[string]json.RawMessage `json:"record"`
	ResponseChecks    map[string]json.RawMessage `json:"response_checks"`
	RawChecks         map[string]bool            `json:"raw_checks"`
	RequestTextChecks []string                   `json:"request_text_checks"`
	Capture           *confCapture               `json:"capture"`
}

type confCapture struct {
	Scenario struct {
		Kind             string `json:"kind"`
		Writers          int    `json:"writers"`
		Processes        bool   `json:"processes"`
		RecordsPerWriter int    `json:"records_per_writer"`
		PaddingBytes     int    `json:"padding_bytes_per_record"`
		SameCaptureFile  bool   `json:"same_capture_file"`
	} `json:"scenario"`
	NonblankLines    *int `json:"capture_file_nonblank_lines"`
	IntactLines      *int `json:"intact_lines"`
	StrictReadRaises bool `json:"strict_read_raises"`
	RecordsWritten   *int `json:"records_written"`
	TolerantRead     *struct {
		InvalidCount int   `json:"invalid_count"`
		CallIndex    []int `json:"call_index"`
	} `json:"tolerant_read"`
	MarkerPresent        *bool                      `json:"marker_present"`
	Gaps                 []json.RawMessage          `json:"gaps"`
	Metrics              map[string]json.RawMessage `json:"metrics"`
	EachWriterSeqOnce    bool                       `json:"each_writer_seq_pair_once"`
	ClientBytesIdentical *bool                      `json:"client_bytes_identical"`
}

func loadConfCase(t *testing.T, dir string) *confCase {
	t.Helper()
	c := &confCase{name: filepath.Base(dir), status: http.StatusOK, headers: map[string]string{}}
	read := func(name string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return nil, false
		}
		require.NoError(t, err)
		return b, true
	}
	decodeInto := func(name string, v any) {
		if b, ok := read(name); ok {
			require.NoError(t, json.Unmarshal(b, v), name)
		}
	}
	b, ok := read("expected.json")
	require.True(t, ok)
	require.NoError(t, json.Unmarshal(b, &c.expected))
	c.request, ok = read("request.json")
	require.True(t, ok)
	for name, ct := range map[string]string{"upstream.sse": "text/event-stream", "upstream.json": "application/json", "upstream.body": ""} {
		if b, ok := read(name); ok {
			c.decoded = b
			if ct != "" {
				c.headers["content-type"] = ct
			}
		}
	}
	require.NotNil(t, c.decoded, "upstream body of %s", c.name)
	c.served = c.decoded
	if b, ok := read("upstream.body.gz"); ok {
		c.served = b
	}
	if b, ok := read("upstream_status.txt"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		c.status = n
	}
	var hdr map[string]string
	decodeInto("upstream_headers.json", &hdr)
	for k, v := range hdr {
		c.headers[strings.ToLower(k)] = v
	}
	decodeInto("chunking.json", &c.chunking)
	c.upstreamBehavior = testvectors.ReadUpstreamBehavior(t, dir)
	decodeInto("client_behavior.json", &c.clientBehavior)
	decodeInto("request_headers.json", &c.requestHeaders)
	return c
}

// bytesSent is what the upstream sends before it breaks the connection (all of served otherwise).
func (c *confCase) bytesSent() []byte {
	if c.upstreamBehavior != nil && c.upstreamBehavior.AbortAfterBytes < len(c.served) {
		return c.served[:c.upstreamBehavior.AbortAfterBytes]
	}
	return c.served
}

// eventsEnd returns the length of the first n SSE events of b (blank-line terminated).
func eventsEnd(b []byte, n int) int {
	end := 0
	for i := 0; i < n; i++ {
		j := bytes.Index(b[end:], []byte("\n\n"))
		if j < 0 {
			return len(b)
		}
		end += j + 2
	}
	return end
}

// confUpstream serves every case, chosen by the X-Conformance-Case request header.
type confUpstream struct {
	mu    sync.Mutex
	cases map[string]*confCase
}

func (u *confUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	c := u.cases[r.Header.Get("X-Conformance-Case")]
	u.mu.Unlock()
	if c == nil {
		http.Error(w, "unknown case", http.StatusTeapot)
		return
	}
	if c.upstreamBehavior != nil {
		serveAndReset(w, c)
		return
	}
	for k, v := range c.headers {
		w.Header().Set(k, v)
	}
	if !strings.HasPrefix(c.headers["content-type"], "text/event-stream") && c.chunking == nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(c.served)))
	}
	w.WriteHeader(c.status)
	fl := w.(http.Flusher)
	switch {
	case c.clientBehavior != nil:
		end := eventsEnd(c.served, c.clientBehavior.DisconnectAfterEvents)
		_, _ = w.Write(c.served[:end])
		fl.Flush()
		// Held until the client has gone and the proxy cancelled this request (SPEC §0 D3).
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	case c.chunking != nil:
		prev := 0
		for _, off := range append(slices.Clone(c.chunking.Offsets), len(c.served)) {
			_, _ = w.Write(c.served[prev:off])
			if c.chunking.Flush {
				fl.Flush()
			}
			time.Sleep(time.Duration(c.chunking.DelayMS) * time.Millisecond)
			prev = off
		}
	default:
		_, _ = w.Write(c.served)
	}
}

// serveAndReset sends the status, headers and the first bytes of the body (chunked), waits the
// case's delay_s (default 0.3 s) and then breaks the connection (upstream_behavior.json).
func serveAndReset(w http.ResponseWriter, c *confCase) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", c.status, http.StatusText(c.status))
	for k, v := range c.headers {
		fmt.Fprintf(buf, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(buf, "Transfer-Encoding: chunked\r\n\r\n")
	sent := c.bytesSent()
	fmt.Fprintf(buf, "%x\r\n%s\r\n", len(sent), sent)
	_ = buf.Flush()
	time.Sleep(c.upstreamBehavior.Delay())
	if tc, ok := conn.(*net.TCPConn); ok && c.upstreamBehavior.How == "reset" {
		_ = tc.SetLinger(0)
	}
}

// buildGymtrace builds the real binary once per test run.
func buildGymtrace(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gymtrace")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// proxyProcess is a running `gymtrace proxy`.
type proxyProcess struct {
	url        string
	cmd        *exec.Cmd
	stdout     bytes.Buffer // after the ready line; read only after stdoutDone
	stdoutDone chan struct{}
	stderr     *syncbuf.Buffer
	waitOnce   sync.Once
	waitErr    error
}

// wait waits for the process to exit (after its stdout is drained) and returns Wait's error.
func (p *proxyProcess) wait() error {
	p.waitOnce.Do(func() {
		<-p.stdoutDone
		p.waitErr = p.cmd.Wait()
	})
	return p.waitErr
}

// startProxy runs the binary's proxy on a free 127.0.0.1 port and waits for its ready line. At
// cleanup it sends SIGTERM and checks a clean exit and that stdout held exactly one line.
func startProxy(t *testing.T, bin, upstream, dir string, args ...string) *proxyProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"proxy", "--upstream", upstream, "--capture-dir", dir, "--listen", "127.0.0.1:0"}, args...)...)
	p := &proxyProcess{cmd: cmd, stderr: &syncbuf.Buffer{}, stdoutDone: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan string, 1)
	go func() {
		defer close(p.stdoutDone)
		br := bufio.NewReader(out)
		line, _ := br.ReadString('\n')
		ready <- line
		_, _ = io.Copy(&p.stdout, br)
	}()
	select {
	case line := <-ready:
		if !strings.HasPrefix(line, "listening on http://127.0.0.1:") {
			_ = cmd.Process.Kill()
			_ = p.wait()
			t.Fatalf("ready line %q; stderr: %s", line, p.stderr)
		}
		p.url = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = p.wait()
		t.Fatalf("proxy not ready; stderr: %s", p.stderr)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- p.wait() }()
		select {
		case err := <-done:
			assert.NoError(t, err, "proxy exit; stderr: %s", p.stderr)
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("proxy did not stop on SIGTERM; stderr: %s", p.stderr)
		}
		assert.Empty(t, p.stdout.String(), "exactly one stdout line")
	})
	return p
}

// TestConformance runs every testdata/conformance case through the real gymtrace binary.
func TestConformance(t *testing.T) {
	bin := buildGymtrace(t)
	up := &confUpstream{cases: map[string]*confCase{}}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	dir := t.TempDir()
	proxy := startProxy(t, bin, upSrv.URL, dir)
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)

	for _, caseDir := range testvectors.ConformanceCases(t) {
		c := loadConfCase(t, caseDir)
		up.mu.Lock()
		up.cases[c.name] = c
		up.mu.Unlock()
		t.Run(c.name, func(t *testing.T) {
			if c.expected.Capture != nil && c.expected.Capture.Scenario.Kind == "concurrent_writers" {
				runConcurrentWriters(t, bin, upSrv.URL, c)
				return
			}
			rid := "conf-" + c.name[:3]
			clientBody, status := confCall(t, client, proxy.url, rid, c)
			assert.Equal(t, c.expected.Client.Status, status, "client status")
			if id := c.expected.Client.BodyIdenticalToUpstrea; id != nil && *id {
				assert.Equal(t, string(c.bytesSent()), string(clientBody), "client bytes identical to the upstream's")
			}
			var lines []capture.IndexedLine
			waitUntil(t, "the capture record", func() bool {
				var err error
				lines, _, err = store.ReadAvailable(rid)
				return err == nil && len(lines) > 0
			})
			require.Len(t, lines, 1, "one record per call")
			checkRecordLine(t, c, lines[0].Line)
			if cc := c.expected.Capture; cc != nil {
				checkStoreOutcome(t, store, rid, cc)
				if cc.ClientBytesIdentical != nil {
					assert.Equal(t, *cc.ClientBytesIdentical, bytes.Equal(clientBody, c.served))
				}
			}
			checkGolden(t, "conformance/"+c.name, readGoldenFiles(t, dir, rid+"."))
		})
	}
}

// confCall makes the case's call through the proxy like its client would.
func confCall(t *testing.T, client *http.Client, proxyURL, rid string, c *confCase) ([]byte, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL+"/ng-rollout/"+rid+c.expected.Endpoint, bytes.NewReader(c.request))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-conformance-secret")
	req.Header.Set("X-Conformance-Case", c.name)
	for k, v := range c.requestHeaders {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if c.clientBehavior != nil {
		want := eventsEnd(c.served, c.clientBehavior.DisconnectAfterEvents)
		got := make([]byte, want)
		_, err := io.ReadFull(resp.Body, got)
		require.NoError(t, err)
		cancel() // the client goes away mid-stream (SPEC §0 D3)
		return got, resp.StatusCode
	}
	body, err := io.ReadAll(resp.Body)
	if c.upstreamBehavior != nil {
		assert.Error(t, err, "the client sees the upstream's break (SPEC §0 D5)")
	} else {
		assert.NoError(t, err)
	}
	return body, resp.StatusCode
}

// checkRecordLine checks one capture line against expected.json's record, response, raw and text checks.
func checkRecordLine(t *testing.T, c *confCase, line []byte) {
	t.Helper()
	assert.NotContains(t, string(line), "sk-conformance-secret", "auth headers are never captured")
	rec, err := capture.BuildModelCallRecord(line, 0)
	require.NoError(t, err)
	got := testvectors.Decode(t, rec.AppendJSON(nil, true)).(map[string]any)
	for k, raw := range c.expected.Record {
		assert.Equal(t, testvectors.Decode(t, raw), got[k], "record.%s", k)
	}
	if len(c.expected.ResponseChecks) == 0 {
		assert.Nil(t, got["response"], "a case without response_checks expects response null")
	}
	for ptr, raw := range c.expected.ResponseChecks {
		v, ok := jsonPointer(got["response"], ptr)
		if assert.True(t, ok, "response%s exists", ptr) {
			assert.Equal(t, testvectors.Decode(t, raw), v, "response%s", ptr)
		}
	}
	_, hasRespRaw := got["response_raw"].(string)
	_, hasReqRaw := got["request_raw"].(string)
	if want, ok := c.expected.RawChecks["response_raw_present"]; ok {
		assert.Equal(t, want, hasRespRaw, "response_raw present")
	}
	if want, ok := c.expected.RawChecks["request_raw_present"]; ok {
		assert.Equal(t, want, hasReqRaw, "request_raw present")
	}
	if c.expected.RawChecks["response_raw_is_bytes_sent"] {
		assert.Equal(t, string(c.bytesSent()), got["response_raw"], "response_raw = the bytes sent")
	}
	if hasRespRaw && strings.HasPrefix(c.headers["content-type"], "text/event-stream") && c.upstreamBehavior == nil && c.clientBehavior == nil {
		assert.Equal(t, string(c.decoded), got["response_raw"], "response_raw is the decoded stream text (SPEC §0 D4)")
	}
	for _, s := range c.expected.RequestTextChecks {
		assert.Contains(t, string(line), s)
	}
	var raw map[string]any
	require.NoError(t, json.Unmarshal(line, &raw))
	assert.Regexp(t, "^[0-9a-f]{32}$", raw["trace_id"])
	assert.Regexp(t, "^[0-9a-f]{16}$", raw["span_id"])
}

// checkStoreOutcome checks the file-level outcome of a capture scenario.
func checkStoreOutcome(t *testing.T, store *capture.Store, rid string, cc *confCapture) {
	t.Helper()
	lines, invalid, err := store.ReadAvailable(rid)
	require.NoError(t, err)
	if cc.RecordsWritten != nil {
		assert.Len(t, lines, *cc.RecordsWritten)
	}
	if cc.TolerantRead != nil {
		assert.Equal(t, cc.TolerantRead.InvalidCount, invalid)
		idx := make([]int, 0, len(lines))
		for _, l := range lines {
			idx = append(idx, l.Index)
		}
		assert.Equal(t, cc.TolerantRead.CallIndex, idx)
	}
	if cc.MarkerPresent != nil {
		marked, err := store.IsIncomplete(rid)
		require.NoError(t, err)
		assert.Equal(t, *cc.MarkerPresent, marked)
	}
	_, err = store.Read(rid)
	assert.Equal(t, cc.StrictReadRaises, err != nil, "strict read raises")
}

// runConcurrentWriters is the concurrent_writers scenario (case 042): writers (each its own proxy
// process when processes is true) append records_per_writer padded records each to one capture file.
func runConcurrentWriters(t *testing.T, bin, upstream string, c *confCase) {
	sc := c.expected.Capture.Scenario
	require.True(t, sc.SameCaptureFile)
	dir := t.TempDir()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	nProxies := 1
	if sc.Processes {
		nProxies = sc.Writers
	}
	proxies := make([]*proxyProcess, nProxies)
	for i := range proxies {
		proxies[i] = startProxy(t, bin, upstream, dir)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: sc.Writers}}
	defer client.CloseIdleConnections()
	rid := "conf-042"
	base := bytes.TrimRight(bytes.TrimSpace(c.request), "}")
	padding := strings.Repeat("p", sc.PaddingBytes)
	var wg sync.WaitGroup
	errs := make(chan error, sc.Writers*sc.RecordsPerWriter)
	for w := range sc.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := proxies[w%nProxies]
			for s := range sc.RecordsPerWriter {
				body := fmt.Sprintf(`%s,"gymtrace_test":{"writer":%d,"seq":%d},"padding":%q}`, base, w, s, padding)
				req, err := http.NewRequest(http.MethodPost, p.url+"/ng-rollout/"+rid+c.expected.Endpoint, strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				req.Header.Set("X-Conformance-Case", c.name)
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(got, c.served) || resp.StatusCode != c.expected.Client.Status {
					errs <- fmt.Errorf("writer %d seq %d: status %d, err %v, body identical %v", w, s, resp.StatusCode, err, bytes.Equal(got, c.served))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	cc := c.expected.Capture
	total := sc.Writers * sc.RecordsPerWriter
	path, err := store.CapturePath(rid)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	rawLines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	assert.Len(t, rawLines, *cc.NonblankLines)
	intact := 0
	seen := map[[2]int]int{}
	for _, l := range rawLines {
		var v struct {
			Request struct {
				T struct{ Writer, Seq int } `json:"gymtrace_test"`
			} `json:"request"`
		}
		if json.Unmarshal(l, &v) == nil && bytes.Count(l, []byte(`"model_call_id"`)) == 1 {
			intact++
			seen[[2]int{v.Request.T.Writer, v.Request.T.Seq}]++
		}
	}
	assert.Equal(t, *cc.IntactLines, intact)
	if cc.EachWriterSeqOnce {
		assert.Len(t, seen, total)
		for k, n := range seen {
			assert.Equal(t, 1, n, "writer/seq %v once", k)
		}
	}
	checkStoreOutcome(t, store, rid, cc)
	records, invalid, err := store.ReadAvailableModelCallRecords(rid)
	require.NoError(t, err)
	assert.Zero(t, invalid)
	m := testvectors.Decode(t, capture.Aggregate(records).AppendJSON(nil)).(map[string]any)
	for k, raw := range cc.Metrics {
		assert.Equal(t, testvectors.Decode(t, raw), m[k], "metrics.%s", k)
	}
	att, err := capture.BuildAttachment([]*capture.Store{store}, rid, false)
	require.NoError(t, err)
	assert.Len(t, att.Gaps, len(cc.Gaps), "gaps")
	for _, l := range rawLines[:3] {
		checkRecordLine(t, c, l)
	}
	checkGolden(t, "conformance/"+c.name, readGoldenFiles(t, dir, rid+"."))
}

// jsonPointer resolves an RFC 6901 pointer in a decoded JSON value.
func jsonPointer(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// waitUntil polls cond for up to 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
