package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Helpers of the end-to-end tests: the real gymtrace binary, child processes, Jaeger and the
// capture files.

// repoRoot is the root module's directory (this package is collectorext/cmd/gymtrace-otelcol).
var repoRoot = filepath.Join("..", "..", "..")

var (
	gymtraceMu   sync.Mutex
	gymtracePath string
	gymtraceErr  error
)

// gymtraceBinary builds the root module's gymtrace command once per test binary and returns its
// path.
func gymtraceBinary(t *testing.T) string {
	t.Helper()
	gymtraceMu.Lock()
	defer gymtraceMu.Unlock()
	if gymtracePath == "" && gymtraceErr == nil {
		root, err := filepath.Abs(repoRoot)
		require.NoError(t, err)
		out := filepath.Join(binDir, "gymtrace")
		start := time.Now()
		cmd := exec.Command("go", "build", "-C", root, "-o", out, "./cmd/gymtrace")
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Run(); err != nil {
			gymtraceErr = fmt.Errorf("go build -C %s ./cmd/gymtrace: %w\n%s", root, err, b.String())
		} else {
			gymtracePath = out
			t.Logf("built gymtrace in %s", time.Since(start).Round(time.Millisecond))
		}
	}
	require.NoError(t, gymtraceErr)
	return gymtracePath
}

// childEnv is the environment of a child process: the test's, without the OpenTelemetry and
// gymtrace-otelcol variables a developer's shell or CI may set (so the proxy exports nowhere
// unless told), plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OTEL_") || strings.HasPrefix(name, "GYMTRACE_OTLP_") ||
			name == "GYMTRACE_CAPTURE_DIR" || name == "GYMTRACE_JAEGER_OTLP_HTTP_ENDPOINT" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// proc is a child process the test started; it is stopped when the test ends.
type proc struct {
	name     string
	cmd      *exec.Cmd
	stdout   *lockedBuffer
	stderr   *lockedBuffer
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// startProc starts bin with args and env. The cleanup sends SIGTERM and kills after 20 s.
func startProc(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start(), name)
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("%s: %v\nstderr:\n%s", name, err, tail(p.stderr.String(), 8192))
		}
	})
	return p
}

// stop sends SIGTERM and waits (20 s, then SIGKILL). It returns the exit error, also for a
// process that had already exited; later calls return the first result.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
		default:
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				p.stopErr = err
				return
			}
			select {
			case <-p.exited:
			case <-time.After(20 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
				p.stopErr = fmt.Errorf("did not stop within 20s of SIGTERM")
				return
			}
		}
		p.stopErr = p.waitErr
	})
	return p.stopErr
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.stopOnce.Do(func() {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		<-p.exited
		var ee *exec.ExitError
		require.ErrorAs(t, p.waitErr, &ee)
		ws, ok := ee.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%s ended by %v", p.name, p.waitErr)
	})
}

// waitListening waits until every port accepts a TCP connection on 127.0.0.1 (60 s bound),
// failing early when the process exits.
func (p *proc) waitListening(t *testing.T, ports ...int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, port := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				require.NoError(t, c.Close())
				break
			}
			select {
			case <-p.exited:
				t.Fatalf("%s exited before listening on %s: %v\n%s", p.name, addr, p.waitErr, tail(p.stderr.String(), 8192))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not listening on %s after 60s\n%s", p.name, addr, tail(p.stderr.String(), 8192))
			}
		}
	}
}

// collectorPorts are the OTLP receiver ports of one gymtrace-otelcol.
type collectorPorts struct{ grpc, http int }

// startExampleCollector runs gymtrace-otelcol with the shipped example configuration
// (config/gymtrace-otelcol.yaml: queue disabled, no batch processor before gymcapture), its
// receivers on free 127.0.0.1 ports, writing captureDir and forwarding traces to the OTLP/HTTP
// endpoint jaegerHTTP (http://host:port).
func startExampleCollector(t *testing.T, captureDir, jaegerHTTP string) (*proc, collectorPorts) {
	t.Helper()
	ports := collectorPorts{grpc: freePort(t), http: freePort(t)}
	env := childEnv(
		fmt.Sprintf("GYMTRACE_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", ports.grpc),
		fmt.Sprintf("GYMTRACE_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", ports.http),
		"GYMTRACE_CAPTURE_DIR="+captureDir,
		"GYMTRACE_JAEGER_OTLP_HTTP_ENDPOINT="+jaegerHTTP,
	)
	p := startProc(t, "gymtrace-otelcol", binary(t), env, "--config="+exampleConfig)
	p.waitListening(t, ports.grpc, ports.http)
	return p, ports
}

var listeningRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)\n`)

// startProxy runs `gymtrace proxy` on a free 127.0.0.1 port with args after the listen and
// upstream flags and returns the process and its base URL.
func startProxy(t *testing.T, upstreamURL string, env []string, args ...string) (*proc, string) {
	t.Helper()
	all := append([]string{"proxy", "--listen", "127.0.0.1:0", "--upstream", upstreamURL}, args...)
	p := startProc(t, "gymtrace proxy", gymtraceBinary(t), env, all...)
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(p.stdout.String()); m != nil {
			return p, m[1]
		}
		select {
		case <-p.exited:
			t.Fatalf("gymtrace proxy exited before listening: %v\n%s", p.waitErr, p.stderr.String())
		case <-deadline:
			t.Fatalf("gymtrace proxy not listening after 30s\n%s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// rolloutTraceID is the trace id of a rollout: the first 16 bytes of
// SHA-256("gymtrace/rollout/"+id), hex (DESIGN.md "Trace per rollout").
func rolloutTraceID(id string) string {
	sum := sha256.Sum256([]byte("gymtrace/rollout/" + id))
	return hex.EncodeToString(sum[:16])
}

// jaegerEndpoints is a running Jaeger on the loopback interface.
type jaegerEndpoints struct {
	queryURL string // http://127.0.0.1:PORT
	otlpHTTP string // http://127.0.0.1:PORT
}

// Jaeger environment, as printed by scripts/jaeger.sh start (the root module's
// internal/testkit/jaegertest reads the same).
const (
	envJaegerQueryURL = "JAEGER_QUERY_URL"
	envJaegerOTLPHTTP = "JAEGER_OTLP_HTTP"
	envRequireJaeger  = "GYMTRACE_REQUIRE_JAEGER"
)

// jaegerFromEnv returns the Jaeger named by JAEGER_QUERY_URL and JAEGER_OTLP_HTTP. When both are
// unset it fails with GYMTRACE_REQUIRE_JAEGER=1 and otherwise starts a private Jaeger with
// scripts/jaeger.sh (stopped when the test ends). Hosts must be loopback addresses.
func jaegerFromEnv(t *testing.T) jaegerEndpoints {
	t.Helper()
	j, ok, err := resolveJaegerEnv(os.Getenv)
	require.NoError(t, err)
	if ok {
		return j
	}
	if os.Getenv(envRequireJaeger) == "1" {
		t.Fatalf("%s=1 but %s and %s are unset: start Jaeger from the repository root with "+
			"`set -a; eval \"$(bash scripts/jaeger.sh start)\"; set +a` (stop it with `bash scripts/jaeger.sh stop`)",
			envRequireJaeger, envJaegerQueryURL, envJaegerOTLPHTTP)
	}
	return startJaeger(t)
}

// resolveJaegerEnv reads the Jaeger environment through getenv; ok is false when neither
// variable is set.
func resolveJaegerEnv(getenv func(string) string) (j jaegerEndpoints, ok bool, err error) {
	q, h := getenv(envJaegerQueryURL), getenv(envJaegerOTLPHTTP)
	if q == "" && h == "" {
		return j, false, nil
	}
	if q == "" || h == "" {
		return j, false, fmt.Errorf("%s=%q and %s=%q: set both or neither (scripts/jaeger.sh start prints both)", envJaegerQueryURL, q, envJaegerOTLPHTTP, h)
	}
	hosts := map[string]string{}
	for name, raw := range map[string]string{envJaegerQueryURL: q, envJaegerOTLPHTTP: h} {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || (u.Path != "" && u.Path != "/") {
			return j, false, fmt.Errorf("%s=%q: want http://127.0.0.1:PORT", name, raw)
		}
		hosts[name] = u.Host
	}
	for name, hp := range hosts {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			return j, false, fmt.Errorf("%s: %q: %w", name, hp, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return j, false, fmt.Errorf("%s: host %q is not a loopback address", name, host)
		}
	}
	return jaegerEndpoints{queryURL: strings.TrimSuffix(q, "/"), otlpHTTP: strings.TrimSuffix(h, "/")}, true, nil
}

// startJaeger starts a private Jaeger on free 127.0.0.1 ports with scripts/jaeger.sh (which
// builds it the first time on a machine: several minutes) and stops it when the test ends.
func startJaeger(t *testing.T) jaegerEndpoints {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "jaeger.sh"))
	require.NoError(t, err)
	env := []string{"JAEGER_STATE_DIR=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "JAEGER_") {
			env = append(env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script, "start")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	t.Cleanup(func() {
		stop := exec.Command("bash", script, "stop")
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("jaeger.sh stop: %v: %s", err, out)
		}
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s start: %v\n%s", script, err, stderr.String())
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	j, ok, err := resolveJaegerEnv(func(k string) string { return vars[k] })
	if err != nil || !ok {
		t.Fatalf("%s start printed no usable environment (%v):\n%s\n%s", script, err, stdout.String(), stderr.String())
	}
	return j
}

// jaegerSpan is the part of a span of Jaeger's /api/traces answer the tests check.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	Tags          []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

// tag returns the value of the span's tag key.
func (s jaegerSpan) tag(key string) (any, bool) {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// jaegerTrace is one trace of Jaeger's /api/traces answer.
type jaegerTrace struct {
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// waitForJaegerSpans polls GET {queryURL}/api/traces/{traceID} until the trace has at least n
// spans (404 means not yet), for at most 30 s.
func waitForJaegerSpans(t *testing.T, j jaegerEndpoints, traceID string, n int) jaegerTrace {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tr := &http.Transport{Proxy: nil}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	last := "no answer"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.queryURL+"/api/traces/"+traceID, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
			_ = resp.Body.Close()
			require.NoError(t, rerr)
			last = fmt.Sprintf("%s %s", resp.Status, tail(string(body), 512))
			switch resp.StatusCode {
			case http.StatusOK:
				var r struct {
					Data []jaegerTrace `json:"data"`
				}
				require.NoError(t, json.Unmarshal(body, &r), last)
				if len(r.Data) == 1 && len(r.Data[0].Spans) >= n {
					return r.Data[0]
				}
			case http.StatusNotFound:
			default:
				t.Fatalf("jaeger: GET /api/traces/%s: %s", traceID, last)
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("jaeger: trace %s: fewer than %d spans after 30s; last answer: %s", traceID, n, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// field is one top-level key of a capture record with its value's bytes as written.
type field struct {
	key string
	val json.RawMessage
}

// parseRecord splits one capture line into its top-level keys in file order.
func parseRecord(line []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("record %.80q: not a JSON object (%v)", line, err)
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("record %.80q: %w", line, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("record %.80q: key %v: %w", line, tok, err)
		}
		out = append(out, field{key: tok.(string), val: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("record %.80q: %w", line, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("record %.80q: trailing data after the object", line)
	}
	return out, nil
}

// value returns the raw value of key in r.
func value(r []field, key string) (json.RawMessage, bool) {
	for _, f := range r {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// stringValue returns the string value of key in r, or "".
func stringValue(r []field, key string) string {
	raw, _ := value(r, key)
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// readCaptureDir reads every <rollout>.capture.jsonl of dir strictly: each line newline-terminated
// and a JSON object. It returns the records per rollout id and the names of the markers.
func readCaptureDir(t *testing.T, dir string) (records map[string][][]field, markers []string) {
	t.Helper()
	records = map[string][][]field{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return records, nil
	}
	require.NoError(t, err)
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".capture.incomplete"):
			markers = append(markers, strings.TrimSuffix(name, ".capture.incomplete"))
		case strings.HasSuffix(name, ".capture.jsonl"):
			b, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			rid := strings.TrimSuffix(name, ".capture.jsonl")
			require.True(t, len(b) > 0 && b[len(b)-1] == '\n', "%s: empty or last line not terminated: %q", name, tail(string(b), 200))
			for i, line := range bytes.Split(b[:len(b)-1], []byte("\n")) {
				r, err := parseRecord(line)
				require.NoError(t, err, "%s line %d", name, i+1)
				records[rid] = append(records[rid], r)
			}
		default:
			t.Errorf("%s: unexpected entry %s", dir, name)
		}
	}
	return records, markers
}
