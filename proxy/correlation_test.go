package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// echoModel answers every call with a small JSON body and reports the path and headers it saw.
type echoModel struct {
	paths   chan string
	headers chan http.Header
}

func newEchoModel() *echoModel {
	return &echoModel{paths: make(chan string, 16), headers: make(chan http.Header, 16)}
}

func (m *echoModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	m.paths <- r.URL.Path
	m.headers <- r.Header.Clone()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"resp_1","model":"m","status":"completed"}`)
}

// captureFiles lists the capture file names in dir (recursively, relative to dir).
func captureFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	}))
	return names
}

func bag(t *testing.T, members ...string) string {
	t.Helper()
	var ms []baggage.Member
	for i := 0; i < len(members); i += 2 {
		m, err := baggage.NewMemberRaw(members[i], members[i+1])
		require.NoError(t, err)
		ms = append(ms, m)
	}
	b, err := baggage.New(ms...)
	require.NoError(t, err)
	return b.String()
}

func TestCorrelationPrecedenceThroughHandler(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		header  []string // X-Gymtrace-Rollout-Id lines
		baggage string
		opts    []Option

		wantStatus       int
		wantCaptured     string // rollout id captured under ("" = nothing captured)
		wantForwardPath  string // path the model server saw ("" = not forwarded)
		wantErr          string // in the 400 body
		wantUncorrelated bool   // counted by gymtrace.capture.uncorrelated_calls
		wantLog          string
	}{
		{name: "prefix", path: "/ng-rollout/p-1/v1/responses",
			wantStatus: 200, wantCaptured: "p-1", wantForwardPath: "/v1/responses"},
		{name: "header", path: "/v1/chat/completions", header: []string{"h-1"},
			wantStatus: 200, wantCaptured: "h-1", wantForwardPath: "/v1/chat/completions"},
		{name: "baggage", path: "/v1/messages", baggage: bag(t, "user", "x", rollout.BaggageKey, "b-1"),
			wantStatus: 200, wantCaptured: "b-1", wantForwardPath: "/v1/messages"},
		{name: "prefix wins over header and baggage", path: "/ng-rollout/p-2/v1/responses", header: []string{"h-2"}, baggage: bag(t, rollout.BaggageKey, "b-2"),
			wantStatus: 200, wantCaptured: "p-2", wantForwardPath: "/v1/responses"},
		{name: "header wins over baggage", path: "/v1/responses", header: []string{"h-3"}, baggage: bag(t, rollout.BaggageKey, "b-3"),
			wantStatus: 200, wantCaptured: "h-3", wantForwardPath: "/v1/responses"},
		{name: "valid prefix ignores an invalid header", path: "/ng-rollout/p-4/v1/responses", header: []string{"bad id"},
			wantStatus: 200, wantCaptured: "p-4", wantForwardPath: "/v1/responses"},
		{name: "invalid header refused even with valid baggage", path: "/v1/responses", header: []string{".hidden"}, baggage: bag(t, rollout.BaggageKey, "b-5"),
			wantStatus: 400, wantErr: `header X-Gymtrace-Rollout-Id: invalid rollout id \".hidden\": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`},
		{name: "empty header refused", path: "/v1/chat/completions", header: []string{""},
			wantStatus: 400, wantErr: `header X-Gymtrace-Rollout-Id: invalid rollout id \"\": must match`},
		{name: "repeated header refused", path: "/v1/chat/completions", header: []string{"h-6", "h-6"},
			wantStatus: 400, wantErr: `the header must appear once, got 2 values`},
		{name: "invalid baggage id refused", path: "/v1/messages", baggage: bag(t, rollout.BaggageKey, "a/b"),
			wantStatus: 400, wantErr: `baggage member gymtrace.rollout_id: invalid rollout id \"a/b\": must match`},
		{name: "too long header refused", path: "/v1/responses", header: []string{strings.Repeat("x", rollout.MaxIDBytes+1)},
			wantStatus: 400, wantErr: `longer than 200 bytes (201)`},
		{name: "no id: forwarded uncaptured, counted", path: "/v1/responses",
			wantStatus: 200, wantForwardPath: "/v1/responses", wantUncorrelated: true,
			wantLog: `names no rollout (no /ng-rollout/<id>/ prefix, no X-Gymtrace-Rollout-Id header, no gymtrace.rollout_id baggage); forwarded uncaptured" path=/v1/responses`},
		{name: "no id: other baggage only", path: "/v1/responses", baggage: bag(t, "user", "x"),
			wantStatus: 200, wantForwardPath: "/v1/responses", wantUncorrelated: true, wantLog: "forwarded uncaptured"},
		{name: "malformed baggage header naming the member is refused", path: "/v1/responses", baggage: "gymtrace.rollout_id",
			wantStatus: 400, wantErr: `the baggage header is malformed, so the member cannot be read`},
		{name: "no id: malformed baggage header is ignored", path: "/v1/responses", baggage: "broken,user=x",
			wantStatus: 200, wantForwardPath: "/v1/responses", wantUncorrelated: true, wantLog: "forwarded uncaptured"},
		{name: "no id: captured under the uncorrelated id", path: "/v1/chat/completions", opts: []Option{WithUncorrelatedRolloutID("unmatched")},
			wantStatus: 200, wantCaptured: "unmatched", wantForwardPath: "/v1/chat/completions",
			wantUncorrelated: true,
			wantLog:          `captured under the uncorrelated rollout id" path=/v1/chat/completions rollout_id=unmatched`},
		{name: "uncorrelated id does not override a header", path: "/v1/chat/completions", header: []string{"h-7"}, opts: []Option{WithUncorrelatedRolloutID("unmatched")},
			wantStatus: 200, wantCaptured: "h-7", wantForwardPath: "/v1/chat/completions"},
		{name: "uncaptured path with no id is not counted", path: "/v1/models",
			wantStatus: 200, wantForwardPath: "/v1/models"},
		{name: "uncaptured path with an invalid header is forwarded", path: "/v1/models", header: []string{"bad id"},
			wantStatus: 200, wantForwardPath: "/v1/models"},
		{name: "near miss of a captured path is not counted", path: "/v1/responses/", opts: []Option{WithUncorrelatedRolloutID("unmatched")},
			wantStatus: 200, wantForwardPath: "/v1/responses/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := newEchoModel()
			mp, reader := newMetricReader(t)
			env := newCaptureEnv(t, model, nil, append(tt.opts, WithMeterProvider(mp))...)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+tt.path, strings.NewReader(`{"model":"m"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for _, h := range tt.header {
				req.Header.Add(rollout.Header, h)
			}
			if tt.baggage != "" {
				req.Header.Set("Baggage", tt.baggage)
			}
			resp, err := env.client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			assert.Equal(t, tt.wantStatus, resp.StatusCode, "body %s", body)
			if tt.wantErr != "" {
				assert.Contains(t, string(body), tt.wantErr)
				assert.True(t, json.Valid(body), "a JSON error body")
				assert.Contains(t, string(body), "invalid_request_error")
			}
			if tt.wantForwardPath == "" {
				assert.Empty(t, model.paths, "nothing forwarded")
			} else {
				require.Len(t, model.paths, 1)
				assert.Equal(t, tt.wantForwardPath, <-model.paths)
			}
			files := captureFiles(t, env.store.Dir())
			if tt.wantCaptured == "" {
				assert.Empty(t, files, "nothing captured")
				assert.Empty(t, resp.Header.Get(modelCallIDHeader))
			} else {
				assert.Equal(t, []string{tt.wantCaptured + ".capture.jsonl"}, files)
				rec := env.record(t, tt.wantCaptured)
				assert.Equal(t, resp.Header.Get(modelCallIDHeader), rec["model_call_id"])
				assert.Equal(t, rollout.ID{Rollout: tt.wantCaptured}.TraceID().String(), rec["trace_id"], "the rollout's trace")
			}
			assert.Equal(t, tt.wantUncorrelated, uncorrelatedCalls(t, reader) == 1)
			if tt.wantLog != "" {
				assert.Contains(t, env.logs.String(), tt.wantLog)
				assert.Contains(t, env.logs.String(), "level=WARN")
			} else {
				assert.NotContains(t, env.logs.String(), "names no rollout")
			}
		})
	}
}

func TestCorrelationThroughProxyKeepsHeaders(t *testing.T) {
	model := newEchoModel()
	up := httptest.NewServer(model)
	t.Cleanup(up.Close)
	mp, reader := newMetricReader(t)
	env := newProxyEnv(t, up.URL, nil, WithMeterProvider(mp))
	b := bag(t, rollout.BaggageKey, "bag-1")
	resp, _, err := env.post(t, "/v1/responses", `{"model":"m"}`, map[string]string{"Baggage": b})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/v1/responses", <-model.paths)
	h := <-model.headers
	assert.Equal(t, b, h.Get("Baggage"), "baggage forwarded unchanged")
	rec := env.record(t, "bag-1")
	tp := h.Get("Traceparent")
	require.NotEmpty(t, tp)
	assert.Equal(t, "00-"+rec["trace_id"].(string)+"-"+rec["span_id"].(string)+"-01", tp, "the upstream nests under the model-call span")
	assert.Zero(t, uncorrelatedCalls(t, reader))
}

// uncorrelatedCalls sums gymtrace.capture.uncorrelated_calls over its data points.
func uncorrelatedCalls(t *testing.T, r *sdkmetric.ManualReader) int64 {
	t.Helper()
	var n int64
	if m, ok := collect(t, r)[semconv.GymtraceCaptureUncorrelatedCallsName]; ok {
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			n += p.Value
		}
	}
	return n
}

func TestCorrelationOptionsValidated(t *testing.T) {
	tests := []struct {
		name    string
		opt     Option
		wantErr string
		wantIs  error
	}{
		{name: "bad run id", opt: WithRunID("../x"), wantErr: `proxy capture handler: WithRunID: invalid run id "../x": must match`, wantIs: rollout.ErrInvalidRun},
		{name: "bad uncorrelated id", opt: WithUncorrelatedRolloutID("a b"), wantErr: `proxy capture handler: WithUncorrelatedRolloutID: invalid rollout id "a b": must match`, wantIs: rollout.ErrInvalidID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "caps")
			h, err := CaptureHandler(http.NotFoundHandler(), WithCaptureDir(dir), tt.opt)
			require.ErrorIs(t, err, tt.wantIs)
			assert.Nil(t, h)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NoDirExists(t, dir, "nothing created")
		})
	}
}

func TestRunIDNamespacesCaptureAndTrace(t *testing.T) {
	root := t.TempDir()
	model := newEchoModel()
	h, err := CaptureHandler(model, WithCaptureDir(root), WithRunID("run-9"), WithLogger(newTextLogger(io.Discard)))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		srv.Close()
		require.NoError(t, h.Shutdown(context.Background()))
	})
	assert.Equal(t, filepath.Join(root, "run-9"), h.Store().Dir())

	resp, err := client.Post(srv.URL+"/ng-rollout/3-1/v1/responses", "application/json", strings.NewReader(`{"model":"m"}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)

	assert.Equal(t, []string{filepath.Join("run-9", "3-1.capture.jsonl")}, captureFiles(t, root))
	data, err := os.ReadFile(filepath.Join(root, "run-9", "3-1.capture.jsonl"))
	require.NoError(t, err)
	// Golden: sha256("gymtrace/rollout/run-9/3-1")[:16], computed with Python's hashlib.
	assert.Contains(t, string(data), `"trace_id":"c6f3f148eea160fb4be9a80b2aa96e35"`)
	assert.NotContains(t, string(data), rollout.ID{Rollout: "3-1"}.TraceID().String())
}

// The baggage member the proxy reads (package rollout) is the one semconv names for other processes.
func TestBaggageKeyIsSemconv(t *testing.T) {
	assert.Equal(t, semconv.GymtraceRolloutIDBaggageMember, rollout.BaggageKey)
}
