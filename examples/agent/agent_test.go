package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// TestMain runs the test binary as the workload when the sandbox starts it as the agent binary
// (`<binary> workload ...`, see Sandbox), and otherwise runs the tests, checking that none leaves a
// goroutine behind.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workloadCommand {
		if err := runWorkload(os.Args[2:], os.Stdout); err != nil {
			_, _ = os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestParseWorkload(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		want       workload
		err        string
	}{
		{"the default task", `{"workload":"` + defaultTask + `"}`, workload{MemoryMiB: 64, CPUSeconds: 0.5}, ""},
		{"terse spec", `{"workload":"memory=8MiB cpu=2s"}`, workload{MemoryMiB: 8, CPUSeconds: 2}, ""},
		{"spaces and case", `{"workload":"CPU = 0.25 s, Memory = 1 mib"}`, workload{MemoryMiB: 1, CPUSeconds: 0.25}, ""},
		{"zero", `{"workload":"memory=0MiB cpu=0s"}`, workload{}, ""},
		{"no cpu", `{"workload":"memory=8MiB"}`, workload{}, `must name memory=<n>MiB and cpu=<seconds>s`},
		{"too much memory", `{"workload":"memory=4096MiB cpu=1s"}`, workload{}, "memory 4096 MiB: must be between 0 and 1024"},
		{"too much cpu", `{"workload":"memory=1MiB cpu=31s"}`, workload{}, "cpu 31 s: must be between 0 and 30"},
		{"memory overflows int", `{"workload":"memory=99999999999999999999MiB cpu=1s"}`, workload{}, `memory "99999999999999999999"`},
		{"not an object", `"memory=1MiB cpu=1s"`, workload{}, `must be a JSON object with a string "workload"`},
		{"workload not a string", `{"workload":3}`, workload{}, `must be a JSON object with a string "workload"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWorkload(tc.args)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRunWorkload(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, runWorkload([]string{"--memory-mib", "4", "--cpu-seconds", "0.05"}, &out))
	var res workloadResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	assert.Equal(t, 4, res.MemoryMiB)
	assert.Equal(t, 4<<20/os.Getpagesize(), res.TouchedPages, "every page written")
	assert.GreaterOrEqual(t, res.CPUTimeS, 0.05, "the process's own CPU time reached the target")

	for _, args := range [][]string{
		{"--memory-mib", "-1"}, {"--cpu-seconds", "NaN"}, {"--cpu-seconds", "31"}, {"extra"}, {"--nope"},
	} {
		assert.Error(t, runWorkload(args, &out), "args %q", args)
	}
}

func TestRolloutLine(t *testing.T) {
	line, err := rolloutLine(identity{TaskIndex: 3, RolloutIndex: 1}, "a <task>", "done & dusted", nil)
	require.NoError(t, err)
	assert.Equal(t, `{"_ng_task_index":3,"_ng_rollout_index":1,"prompt":"a <task>","response":"done & dusted"}`+"\n", string(line))

	b := agentobs.AgentObservationBundle{Source: "gymtrace"}
	line, err = rolloutLine(identity{RolloutIndex: 2, ID: "s7-3-2"}, "t", "a", &b)
	require.NoError(t, err)
	assert.Equal(t, `{"_ng_task_index":0,"_ng_rollout_index":2,"_ng_rollout_id":"s7-3-2","prompt":"t","response":"a","ng_agent_observations":{"source":"gymtrace","records":[],"gaps":[]}}`+"\n", string(line))
}

// TestParseFlagsRolloutID: the rollout id is Gym's (SPEC §1.2): the explicit one, else the indices.
func TestParseFlagsRolloutID(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--task-index", "3", "--rollout-index", "1"}, "3-1"},
		{nil, "0-0"},
		{[]string{"--task-index", "3", "--rollout-id", "s7-3-2"}, "s7-3-2"},
	} {
		cfg, err := parseFlags(append([]string{"--base-url", "http://127.0.0.1:1"}, tc.args...), io.Discard)
		require.NoError(t, err, "args %q", tc.args)
		assert.Equal(t, tc.want, cfg.rolloutID, "args %q", tc.args)
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no base url", []string{"--rollout-id", "r-1"}, "--base-url is required"},
		{"negative task index", []string{"--base-url", "http://127.0.0.1:1", "--task-index", "-1"}, "--task-index -1: must be >= 0"},
		{"negative rollout index", []string{"--base-url", "http://127.0.0.1:1", "--rollout-index", "-2"}, "--rollout-index -2: must be >= 0"},
		{"bad rollout id", []string{"--base-url", "http://127.0.0.1:1", "--rollout-id", "../x"}, "--rollout-id"},
		{"negative memory limit", []string{"--base-url", "http://127.0.0.1:1", "--rollout-id", "r", "--tool-memory-limit-mib", "-1"}, "must be >= 0"},
		{"positional argument", []string{"--base-url", "http://127.0.0.1:1", "--rollout-id", "r", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tc.args, &stdout, &stderr)
			require.ErrorIs(t, err, errUsage)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, stdout.String())
		})
	}
}

// TestAgentRun runs one episode in process — the fake model behind proxy.New, the openai-go
// client through proxy.NewHTTPClient around agentobs.Transport, a small workload in the sandbox (this
// test binary in workload mode) — and checks the calls, the joined bundle and the span tree in an
// in-memory exporter.
func TestAgentRun(t *testing.T) {
	dir := t.TempDir()
	upstream := httptest.NewServer(fakemodel.New())
	t.Cleanup(upstream.Close)
	handler, err := proxy.New(upstream.URL, proxy.WithCaptureDir(dir), proxy.WithModelServerName("policy_model"))
	require.NoError(t, err)
	proxySrv := httptest.NewServer(handler)
	t.Cleanup(func() {
		proxySrv.Close()
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, handler.Shutdown(c))
	})

	exp := tracetest.NewInMemoryExporter()
	tel, err := newTelemetry(t.Context(), dir, "", sdktrace.NewSimpleSpanProcessor(exp))
	require.NoError(t, err)
	const id = "task-1_0"
	rec, err := agentobs.NewRecorder(tel.tp, id)
	require.NoError(t, err)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	hc, err := proxy.NewHTTPClient(&http.Client{Transport: agentobs.Transport(tr)}, proxy.WithClientTracerProvider(tel.tp))
	require.NoError(t, err)
	runBody, err := json.Marshal(map[string]string{rollout.IDKey: id})
	require.NoError(t, err)
	base, err := rollout.BaseURLForRun(proxySrv.URL, runBody)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	a := &Agent{
		Client:  openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithHTTPClient(hc), option.WithAPIKey("sk-test"), option.WithMaxRetries(0)),
		Model:   defaultModel,
		Sandbox: Sandbox{Executable: exe, ID: "local-test", Timeout: time.Minute},
	}
	ctx, root := proxy.StartRollout(t.Context(), tel.tp, id)
	res, err := a.Run(ctx, rec, "Run the workload memory=8MiB cpu=0.05s and report.")
	root.End()
	require.NoError(t, err)
	stubs := exp.GetSpans() // before the shutdown, which empties the exporter
	require.NoError(t, tel.shutdown(t.Context()))

	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	calls, err := store.ReadModelCallRecords(id)
	require.NoError(t, err)
	require.Len(t, calls, 4)
	require.Len(t, res.ModelCalls, 4)
	for i, c := range res.ModelCalls {
		assert.Equal(t, []string{"task", "task", "summary", "final"}[i], c.Phase)
		assert.Equal(t, *calls[i].ModelCallID, c.ModelCallID, "call %d: the header names the captured call", i)
		assert.Equal(t, *calls[i].ResponseID, c.ResponseID)
	}
	assert.Equal(t, 1, res.ToolCalls)
	assert.True(t, strings.HasPrefix(res.Answer, "You said: "), res.Answer)

	joined := agentobs.Join(rec.Bundle(), calls)
	assert.Empty(t, joined.Gaps, "every reference resolved, every call owned")
	fromFile, exists, err := agentobs.ReadBundle(store, id)
	require.NoError(t, err)
	require.True(t, exists)
	want, err := joined.AppendJSON(nil)
	require.NoError(t, err)
	got, err := agentobs.Join(fromFile, calls).AppendJSON(nil)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the observations file builds the recorder's bundle")

	spans := map[string]tracetest.SpanStub{}
	for _, s := range stubs {
		assert.Equal(t, rollout.ID{Rollout: id}.TraceID(), s.SpanContext.TraceID(), "%s is in the rollout's trace", s.Name)
		spans[s.Name] = s
	}
	parent := func(child, parent string) {
		t.Helper()
		require.Contains(t, spans, child)
		require.Contains(t, spans, parent)
		assert.Equal(t, spans[parent].SpanContext.SpanID(), spans[child].Parent.SpanID(), "%s under %s", child, parent)
	}
	rootName := proxy.RolloutSpanNamePrefix + id
	assert.Equal(t, rollout.ID{Rollout: id}.RootSpanID(), spans[rootName].SpanContext.SpanID())
	parent("invoke_agent "+agentName, rootName)
	parent("execute_tool "+workloadToolName, "invoke_agent "+agentName)
	parent("sandbox agent", "execute_tool "+workloadToolName)
	parent("context_compaction", "invoke_agent "+agentName)
}

// Observation spans that reach no observations file (one without a rollout id, one with an unsafe
// id) fail the shutdown: the processor's counters say so.
func TestTelemetryShutdownReportsLostObservations(t *testing.T) {
	tel, err := newTelemetry(t.Context(), t.TempDir(), "")
	require.NoError(t, err)
	tool := attribute.String("gen_ai.operation.name", "execute_tool")
	for _, attrs := range [][]attribute.KeyValue{{tool}, {tool, attribute.String("gymtrace.rollout.id", "../x")}, {tool, attribute.String("gymtrace.rollout.id", "ok")}} {
		_, s := tel.tp.Tracer("t").Start(t.Context(), "execute_tool x", trace.WithAttributes(attrs...))
		s.End()
	}
	require.EqualError(t, tel.shutdown(t.Context()), "telemetry: observations file: 2 observation span(s) not written")
}
