package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

// testEnv is a capture handler (or proxy) served on 127.0.0.1 with its own store, client and an
// in-memory span exporter behind the export sampler.
type testEnv struct {
	store  *capture.Store
	h      *Handler
	srv    *httptest.Server
	client *http.Client
	spans  *tracetest.InMemoryExporter
	logs   *syncbuf.Buffer
	// shutdownErr is what the cleanup's Shutdown must return (nil unless a test shut down with an error).
	shutdownErr error
}

// newTestStore returns a store in a fresh temp dir.
func newTestStore(t testing.TB, opts ...capture.StoreOption) *capture.Store {
	t.Helper()
	s, err := capture.NewStore(t.TempDir(), opts...)
	require.NoError(t, err)
	return s
}

// newCaptureEnv serves CaptureHandler(next).
func newCaptureEnv(t testing.TB, next http.Handler, store *capture.Store, opts ...Option) *testEnv {
	t.Helper()
	return newEnv(t, store, func(o []Option) (*Handler, error) { return CaptureHandler(next, o...) }, opts...)
}

// newProxyEnv serves New(upstream).
func newProxyEnv(t testing.TB, upstream string, store *capture.Store, opts ...Option) *testEnv {
	t.Helper()
	return newEnv(t, store, func(o []Option) (*Handler, error) { return New(upstream, o...) }, opts...)
}

func newEnv(t testing.TB, store *capture.Store, build func([]Option) (*Handler, error), opts ...Option) *testEnv {
	t.Helper()
	if store == nil {
		store = newTestStore(t)
	}
	e := &testEnv{store: store, spans: tracetest.NewInMemoryExporter(), logs: &syncbuf.Buffer{}}
	all := append([]Option{
		WithStore(store),
		WithModelServerName("policy_model"),
		WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(e.spans)),
		WithLogger(newTextLogger(e.logs)),
	}, opts...)
	h, err := build(all)
	require.NoError(t, err)
	e.h = h
	e.srv = httptest.NewServer(h)
	e.client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(func() {
		e.client.CloseIdleConnections()
		e.srv.Close()
		err := h.Shutdown(context.Background())
		if e.shutdownErr != nil {
			require.ErrorIs(t, err, e.shutdownErr)
		} else {
			require.NoError(t, err)
		}
	})
	return e
}

// newUpstream serves h on 127.0.0.1 and closes it at cleanup.
func newUpstream(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	// Read the request body first: net/http cancels r.Context() on a client disconnect only once
	// the body was consumed, and the tests wait on it.
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		h(w, r)
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// post sends body to path and returns the response with its body read whole (err is the body read error).
func (e *testEnv) post(t testing.TB, path, body string, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	return resp, b, rerr
}

// records returns the capture lines of rollout id as decoded maps and raw lines.
func (e *testEnv) records(t testing.TB, id string) ([]map[string]any, []string) {
	t.Helper()
	p, err := e.store.CapturePath(id)
	require.NoError(t, err)
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(t, err)
	var maps []map[string]any
	var lines []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		lines = append(lines, l)
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		require.NoError(t, d.Decode(&m), "line %q", l)
		maps = append(maps, m)
	}
	return maps, lines
}

// record returns the single record of rollout id.
func (e *testEnv) record(t testing.TB, id string) map[string]any {
	t.Helper()
	recs, _ := e.records(t, id)
	require.Len(t, recs, 1, "one record for %s", id)
	return recs[0]
}

// spanAttrs returns the attributes of the single exported span.
func (e *testEnv) spanAttrs(t testing.TB) map[attribute.Key]attribute.Value {
	t.Helper()
	spans := e.spans.GetSpans()
	require.Len(t, spans, 1)
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range spans[0].Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// waitFor polls cond for up to 5s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// newTestCallBudget is a call's view of the default capture bounds (SPEC §0 D15).
func newTestCallBudget() *callBudget {
	b := defaultCaptureBounds()
	return newCallBudget(&b, &inFlightBudget{limit: b.inFlight})
}
