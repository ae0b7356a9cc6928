package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/rollout"
)

// Issue 7 part 4: the proxy reaches only its upstream, and request headers never reach a file, a
// span or a log line.

// countingListener is a TCP listener on 127.0.0.1 that must never be contacted: it counts and
// closes every connection.
type countingListener struct {
	ln       net.Listener
	accepted atomic.Int64
	done     chan struct{}
}

func newCountingListener(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &countingListener{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-c.done
	})
	return c
}

func (c *countingListener) addr() string { return c.ln.Addr().String() }

// TestProxyDialsOnlyItsUpstream: absolute-form targets, CONNECT, Host and forwarding-header tricks,
// upstream redirects and proxy environment variables never make the proxy contact another host.
func TestProxyDialsOnlyItsUpstream(t *testing.T) {
	evil := newCountingListener(t)
	t.Setenv("HTTP_PROXY", "http://"+evil.addr())
	t.Setenv("HTTPS_PROXY", "http://"+evil.addr())
	t.Setenv("ALL_PROXY", "http://"+evil.addr())
	t.Setenv("NO_PROXY", "")

	type seen struct{ host, path string }
	got := make(chan seen, 16)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.URL.RequestURI()}
		if strings.HasSuffix(r.URL.Path, "/redirect") {
			w.Header().Set("Location", "http://"+evil.addr()+"/v1/responses")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","object":"response","status":"completed","output":[]}`)
	})
	upHost := strings.TrimPrefix(up.URL, "http://")
	env := newProxyEnv(t, up.URL, nil)
	raw := func(t *testing.T, request string) int {
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		_, err = io.WriteString(conn, request)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	post := func(target string, hdr ...string) string {
		return "POST " + target + " HTTP/1.1\r\n" + strings.Join(hdr, "") + "Content-Length: 2\r\nConnection: close\r\n\r\n{}"
	}
	tests := []struct {
		name     string
		req      string
		status   int
		upstream string // the request URI the upstream must see; "" = the upstream must not be called
	}{
		{name: "absolute-form target naming another host", req: post("http://"+evil.addr()+"/ng-rollout/r1/v1/responses", "Host: "+evil.addr()+"\r\n"), status: 400},
		{name: "absolute-form uncaptured path", req: post("http://"+evil.addr()+"/v1/models", "Host: "+upHost+"\r\n"), status: 400},
		{name: "absolute-form https to another host", req: post("https://"+evil.addr()+"/v1/responses", "Host: "+upHost+"\r\n"), status: 400},
		{name: "absolute-form with upstream host as user info", req: post("http://"+upHost+"@"+evil.addr()+"/v1/responses", "Host: x\r\n"), status: 400},
		{name: "CONNECT", req: "CONNECT " + evil.addr() + " HTTP/1.1\r\nHost: " + evil.addr() + "\r\n\r\n", status: 405},
		{name: "Host header naming another host", req: post("/ng-rollout/h1/v1/responses", "Host: "+evil.addr()+"\r\n"), status: 200, upstream: "/v1/responses"},
		{name: "forwarding headers", req: post("/ng-rollout/h2/v1/responses", "Host: x\r\nX-Forwarded-Host: "+evil.addr()+"\r\nForwarded: host="+evil.addr()+"\r\nX-Original-Url: http://"+evil.addr()+"/\r\n"), status: 200, upstream: "/v1/responses"},
		{name: "scheme-relative path", req: post("//"+evil.addr()+"/v1/models", "Host: x\r\n"), status: 200, upstream: "//" + evil.addr() + "/v1/models"},
		{name: "upstream redirect is not followed", req: post("/ng-rollout/h3/redirect", "Host: x\r\n"), status: 307, upstream: "/redirect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.status, raw(t, tt.req))
			if tt.upstream == "" {
				select {
				case s := <-got:
					t.Fatalf("the upstream was called: %+v", s)
				default:
				}
				return
			}
			s := <-got
			assert.Equal(t, upHost, s.host, "Host is always the upstream's")
			assert.Equal(t, tt.upstream, s.path)
		})
	}
	assert.Zero(t, evil.accepted.Load(), "the other host was never contacted")
}

// secretHeaders are credentials a client may send; none may be captured.
var secretHeaders = map[string]string{
	"Authorization":       "Bearer sk-secret-authorization-0001",
	"X-Api-Key":           "sk-ant-secret-x-api-key-0002",
	"Api-Key":             "azure-secret-api-key-0003",
	"Cookie":              "session=secret-cookie-0004",
	"Proxy-Authorization": "Basic c2VjcmV0LXByb3h5LTAwMDU=",
	"Openai-Organization": "org-secret-0006",
}

// TestCaptureNeverHoldsRequestHeaders: across every dialect and outcome (answered, streamed,
// upstream down, refused id, client gone), no credential header reaches a capture file, a marker, a
// span (attributes, events, links, resource) or a log line.
func TestCaptureNeverHoldsRequestHeaders(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadURL := "http://" + dead.Addr().String()
	require.NoError(t, dead.Close())
	fm := fakemodel.New(fakemodel.WithChunkDelay(time.Millisecond))
	up := newUpstream(t, fm.ServeHTTP)

	for _, upstream := range []string{up.URL, deadURL} {
		t.Run(fmt.Sprintf("upstream reachable=%v", upstream == up.URL), func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			env := newProxyEnv(t, upstream, nil, WithMessageContent(true), WithUncorrelatedRolloutID("uncorr"),
				WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp)), WithExportSampler(sdktrace.AlwaysSample()))
			withSecrets := func(extra map[string]string) map[string]string {
				h := map[string]string{}
				for k, v := range secretHeaders {
					h[k] = v
				}
				for k, v := range extra {
					h[k] = v
				}
				return h
			}
			for _, dc := range dialectCases {
				for _, body := range []string{dc.request, dc.nonStreaming()} {
					_, _, _ = env.post(t, "/ng-rollout/sec"+dc.path, body, withSecrets(nil))
				}
				_, _, _ = env.post(t, dc.path, dc.request, withSecrets(map[string]string{rollout.Header: "sec-hdr"}))
				_, _, _ = env.post(t, dc.path, dc.request, withSecrets(nil)) // uncorrelated
				_, _, _ = env.post(t, "/ng-rollout/bad%20id"+dc.path, dc.request, withSecrets(nil))
			}
			// A client that goes away after the first byte of the answer.
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+"/ng-rollout/sec-gone/v1/chat/completions", strings.NewReader(dialectCases[1].request))
			require.NoError(t, err)
			for k, v := range secretHeaders {
				req.Header.Set(k, v)
			}
			resp, err := env.client.Do(req)
			require.NoError(t, err)
			_, _ = resp.Body.Read(make([]byte, 1))
			cancel()
			resp.Body.Close()
			waitFor(t, "the cancelled call's record", func() bool { return len(mustRecords(t, env, "sec-gone")) == 1 })

			// Mark a rollout incomplete too, so markers are among the files checked.
			require.NoError(t, env.store.MarkIncomplete("sec"))
			var files int
			require.NoError(t, filepath.WalkDir(env.store.Dir(), func(path string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.IsDir() {
					return nil
				}
				files++
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				for name, v := range secretHeaders {
					assert.NotContains(t, string(b), v, "%s in %s", name, path)
				}
				return nil
			}))
			assert.GreaterOrEqual(t, files, 5)
			spans := exp.GetSpans()
			assert.NotEmpty(t, spans)
			for _, s := range spans {
				var texts []string
				for _, kv := range s.Attributes {
					texts = append(texts, string(kv.Key)+"="+kv.Value.Emit())
				}
				for _, ev := range s.Events {
					texts = append(texts, ev.Name)
					for _, kv := range ev.Attributes {
						texts = append(texts, kv.Value.Emit())
					}
				}
				for _, l := range s.Links {
					for _, kv := range l.Attributes {
						texts = append(texts, kv.Value.Emit())
					}
				}
				for _, kv := range s.Resource.Attributes() {
					texts = append(texts, kv.Value.Emit())
				}
				all := strings.Join(texts, "\n")
				for name, v := range secretHeaders {
					assert.NotContains(t, all, v, "%s on span %s", name, s.Name)
					assert.NotContains(t, strings.ToLower(all), "http.request.header."+strings.ToLower(name), "no header attribute")
				}
			}
			logs := env.logs.String()
			for name, v := range secretHeaders {
				assert.NotContains(t, logs, v, "%s in the log", name)
			}
		})
	}
}

// TestCaptureDirDefaultModes: a capture directory the handler creates is 0700 and its files and
// markers 0600 (DESIGN.md "Security"), whatever the umask; WithDirMode/WithFileMode change them.
func TestCaptureDirDefaultModes(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	tests := []struct {
		name              string
		opts              []Option
		wantDir, wantFile fs.FileMode
	}{
		{name: "defaults", wantDir: 0o700, wantFile: 0o600},
		{name: "configured", opts: []Option{WithDirMode(0o750), WithFileMode(0o640)}, wantDir: 0o750, wantFile: 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "caps")
			model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id":"r"}`)
			})
			h, err := CaptureHandler(model, append([]Option{WithCaptureDir(dir)}, tt.opts...)...)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, h.Shutdown(context.Background())) })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, mustRequest(t, "/ng-rollout/modes/v1/responses", `{"model":"m"}`))
			require.Equal(t, http.StatusOK, rec.Code)
			require.NoError(t, h.Store().MarkIncomplete("modes"))
			for _, d := range []string{filepath.Dir(dir), dir} {
				fi, err := os.Stat(d)
				require.NoError(t, err)
				assert.Equal(t, tt.wantDir, fi.Mode().Perm(), d)
			}
			for _, name := range []string{"modes.capture.jsonl", "modes.capture.incomplete"} {
				fi, err := os.Stat(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.Equal(t, tt.wantFile, fi.Mode().Perm(), name)
			}
		})
	}
}

func mustRequest(t *testing.T, path, body string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://model"+path, strings.NewReader(body))
	require.NoError(t, err)
	return r
}
