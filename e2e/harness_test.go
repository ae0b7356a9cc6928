package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

var (
	// directOnly limits the run to the clients against the fake upstream (see doc.go).
	directOnly = flag.Bool("direct-only", false, "run only the client-vs-fake-upstream half (no gymtrace binary, no proxy)")
	// inProcess replaces the gymtrace binary's proxy with proxy.New served in the test
	// process (see doc.go), so -race also covers the proxy's code.
	inProcess = flag.Bool("in-process", false, "serve the capture proxy in-process with proxy.New instead of running `gymtrace proxy`")
)

// binDir holds the gymtrace binary built once per test run.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "gymtrace-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// gymtraceBinary builds ../cmd/gymtrace once per run and returns its path.
func gymtraceBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "gymtrace")
	buildOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/gymtrace")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/gymtrace: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return bin
}

// startUpstream starts the fake model server on 127.0.0.1; it stops at the end of the test.
func startUpstream(t *testing.T, opts ...fakemodel.Option) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(fakemodel.New(opts...))
	t.Cleanup(srv.Close)
	return srv
}

// proxyProc is a running `gymtrace proxy`.
type proxyProc struct {
	URL        string // http://HOST:PORT from its "listening on" line
	CaptureDir string // absolute
	stderr     *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec.Cmd and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// modelServerName is the --model-server-name the proxies run with (the record's model_ref.name).
const modelServerName = "policy_model"

var listeningRE = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`)

// startProxy runs `gymtrace proxy` in front of upstream with a fresh capture directory and
// waits for its "listening on" line. At the end of the test it sends SIGTERM and requires a
// clean exit (DESIGN.md "CLI contract").
func startProxy(t *testing.T, upstream string) *proxyProc {
	t.Helper()
	return startProxyWith(t, upstream, nil)
}

// startProxyWith is startProxy with further proxy flags; under -in-process, opts are the
// proxy.New options those flags stand for.
func startProxyWith(t *testing.T, upstream string, flags []string, opts ...proxy.Option) *proxyProc {
	t.Helper()
	if *inProcess {
		return startInProcessProxy(t, upstream, opts...)
	}
	bin := gymtraceBinary(t)
	p := &proxyProc{CaptureDir: t.TempDir(), stderr: &syncBuffer{}}
	cmd := exec.Command(bin, append([]string{"proxy",
		"--upstream", upstream,
		"--capture-dir", p.CaptureDir,
		"--listen", "127.0.0.1:0",
		"--model-server-name", modelServerName,
	}, flags...)...)
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	lines := make(chan string, 1)
	var rest syncBuffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
				continue
			}
			_, _ = rest.Write(append(sc.Bytes(), '\n'))
		}
		if first {
			close(lines)
		}
	}()
	stopped, failed := false, false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan error, 1)
		go func() {
			<-readDone
			exited <- cmd.Wait()
		}()
		select {
		case err := <-exited:
			if err != nil && !failed {
				t.Errorf("gymtrace proxy did not exit cleanly after SIGTERM: %v\nstderr:\n%s", err, p.stderr.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("gymtrace proxy did not exit within 15s of SIGTERM\nstderr:\n%s", p.stderr.String())
		}
		if s := rest.String(); s != "" {
			t.Errorf("gymtrace proxy printed more than its one stdout line:\n%s", s)
		}
	}
	t.Cleanup(stop)

	select {
	case line, ok := <-lines:
		if !ok {
			failed = true
			stop()
			t.Fatalf("gymtrace proxy exited without a stdout line\nstderr:\n%s", p.stderr.String())
		}
		m := listeningRE.FindStringSubmatch(line)
		if m == nil {
			failed = true
			stop()
			t.Fatalf("gymtrace proxy's first stdout line %q is not `listening on http://127.0.0.1:PORT`\nstderr:\n%s", line, p.stderr.String())
		}
		p.URL = m[1]
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("gymtrace proxy printed no `listening on` line within 30s\nstderr:\n%s", p.stderr.String())
	}
	return p
}

// startInProcessProxy serves proxy.New(upstream) on 127.0.0.1 with the options the CLI's
// proxy command passes, then opts; it shuts down at the end of the test.
func startInProcessProxy(t *testing.T, upstream string, opts ...proxy.Option) *proxyProc {
	t.Helper()
	p := &proxyProc{CaptureDir: t.TempDir(), stderr: &syncBuffer{}}
	h, err := proxy.New(upstream, append([]proxy.Option{proxy.WithCaptureDir(p.CaptureDir), proxy.WithModelServerName(modelServerName)}, opts...)...)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		require.NoError(t, h.Shutdown(c))
	})
	p.URL = srv.URL
	return p
}

// rolloutBaseURL is the base URL an agent points its client at for a rollout: what
// rollout.Correlation.BaseURLForRun returns for a run body carrying the explicit id, with capture
// correlation on (SPEC.md §1.3, §1.4) — checked against the SPEC's literal rule.
func rolloutBaseURL(t *testing.T, base, rolloutID string) string {
	t.Helper()
	c, err := rollout.CorrelationFromGlobalConfig([]byte(`{"observability_enabled": true}`), false)
	require.NoError(t, err)
	runBody, err := json.Marshal(map[string]string{rollout.IDKey: rolloutID})
	require.NoError(t, err)
	u, err := c.BaseURLForRun(base, runBody)
	require.NoError(t, err)
	require.Equal(t, strings.TrimRight(base, "/")+"/ng-rollout/"+rolloutID, u)
	return u
}

// rolloutID turns a test name into a rollout id matching SPEC D12's pattern.
func rolloutID(t *testing.T) string {
	id := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(t.Name(), "-")
	return strings.Trim(id, "-._")
}

// rolloutTraceID is the trace id of a rollout (DESIGN.md "Trace per rollout"): the first 16
// bytes of SHA-256("gymtrace/rollout/" + id), as 32 lowercase hex characters.
func rolloutTraceID(id string) string {
	sum := sha256.Sum256([]byte("gymtrace/rollout/" + id))
	return hex.EncodeToString(sum[:16])
}

// httpClient returns a client for one test whose idle connections close at its end (so goleak
// sees no transport goroutines). With a non-nil rec, every exchange is also recorded.
func httpClient(t *testing.T, rec *recorder) *http.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	var rt http.RoundTripper = tr
	if rec != nil {
		rec.base = tr
		rt = rec
	}
	return &http.Client{Transport: rt, Timeout: time.Minute}
}

// exchange is one recorded HTTP exchange: the request body and, for a non-SSE answer, the
// response body (nil for SSE, which passes through unrecorded).
type exchange struct {
	path     string // the request's URL path
	request  []byte
	response []byte // nil for a stream unless the recorder reads whole streams
	sse      bool
}

// recorder is an http.RoundTripper that records the bodies of the exchanges it carries. A
// response body is read to its end before the client gets it, which changes no byte; a stream's
// only with wholeStreams.
type recorder struct {
	base         http.RoundTripper
	wholeStreams bool
	mu           sync.Mutex
	exchanges    []exchange
}

// all returns the exchanges recorded so far.
func (r *recorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.exchanges...)
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchange{path: req.URL.Path}
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		ex.request, err = io.ReadAll(body)
		if err != nil {
			return nil, err
		}
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ex.sse = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if !ex.sse || r.wholeStreams {
		ex.response, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(ex.response))
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()
	return resp, nil
}

// capturePath is the capture file of a rollout.
func (p *proxyProc) capturePath(id string) string {
	return filepath.Join(p.CaptureDir, id+".capture.jsonl")
}

// lineCount counts the records of a rollout (0 when the file does not exist).
func (p *proxyProc) lineCount(t *testing.T, id string) int {
	t.Helper()
	b, err := os.ReadFile(p.capturePath(id))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return bytes.Count(b, []byte("\n"))
}

// ctx returns the test's context with a deadline for one scenario.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}
