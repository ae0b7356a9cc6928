package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/rollout"
)

// tsDir holds the TypeScript guide's package (README "Agents in any language"): package.json,
// the lockfile .ci/run installs with `npm ci`, and the sources tsc compiles into dist/.
const tsDir = "ts"

var (
	tsBuildOnce sync.Once
	tsBuildErr  error
)

// tsRunner type-checks and compiles e2e/ts with its pinned TypeScript once per run and returns the
// path of the runner (dist/run.js). It fails, never skips, when node or the installed packages are
// missing: the guide is only true while this test runs.
func tsRunner(t *testing.T) string {
	t.Helper()
	tsBuildOnce.Do(func() {
		if _, err := exec.LookPath("node"); err != nil {
			tsBuildErr = fmt.Errorf("the TypeScript e2e needs Node.js 20 or newer on PATH (Debian: apt-get install nodejs npm): %w", err)
			return
		}
		tsc := filepath.Join(tsDir, "node_modules", "typescript", "bin", "tsc")
		if _, err := os.Stat(tsc); err != nil {
			tsBuildErr = fmt.Errorf("e2e/ts has no installed packages: run `npm ci` in e2e/ts (.ci/run does): %w", err)
			return
		}
		out, err := exec.Command("node", tsc, "-p", tsDir).CombinedOutput()
		if err != nil {
			tsBuildErr = fmt.Errorf("tsc -p e2e/ts: %w\n%s", err, out)
		}
	})
	require.NoError(t, tsBuildErr)
	return filepath.Join(tsDir, "dist", "run.js")
}

// tsCall is one call the runner made: its name, what the SDK gave back, and the
// X-Gymtrace-Model-Call-Id it saw (nil without the proxy).
type tsCall struct {
	Name        string          `json:"name"`
	Result      json.RawMessage `json:"result"`
	ModelCallID *string         `json:"modelCallId"`
}

// runTS runs `node dist/run.js args...` with env added to the test's environment and returns its
// calls.
func runTS(t *testing.T, env []string, args ...string) []tsCall {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, "node", append([]string{tsRunner(t)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node %v\nstderr:\n%s", args, stderr.String())
	var out struct {
		Calls []tsCall `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "the runner prints one JSON object: %s", stdout.String())
	return out.Calls
}

// tsFaults are the upstream faults the runner asks for with the X-E2e-Fault header.
func tsFaults(c fakemodel.Call) fakemodel.Fault {
	switch c.Header.Get(faultHeader) {
	case "rate_limit":
		return fakemodel.Fault{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}
	case "abort2":
		return fakemodel.Fault{Cut: fakemodel.CutAbort, CutAfter: 2}
	}
	return fakemodel.Fault{}
}

// tsWant is what the capture record of each of the runner's calls says, in call order.
var tsWant = []struct {
	name     string
	dialect  string
	status   string
	category any // error_category; nil = null
	stream   bool
}{
	{"chat tool call", "chat", "200", nil, false},
	{"chat tool result", "chat", "200", nil, false},
	{"chat stream tool call", "chat", "200", nil, true},
	{"responses tool call", "responses", "200", nil, false},
	{"responses stream tool result", "responses", "200", nil, true},
	{"messages tool call", "messages", "200", nil, false},
	{"messages stream tool result", "messages", "200", nil, true},
	{"chat 429", "chat", "429", "rate_limit", false},
	{"messages stream aborted", "messages", "200", "connection", true},
	{"chat named by header", "chat", "200", nil, false},
	{"messages named by baggage", "messages", "200", nil, false},
}

// TestTypeScriptClients runs the README's TypeScript guide (e2e/ts: the official `openai` and
// `@anthropic-ai/sdk` packages on Node) directly against the fake model and through the real
// `gymtrace proxy`: Chat Completions, Responses and Messages, streamed and not, tool turns, a 429
// and an aborted stream, the rollout named by path prefix, header and baggage. Every SDK result
// through the proxy equals the direct one, every call leaves one record (SPEC §3.1) whose
// model_call_id is the X-Gymtrace-Model-Call-Id the SDK read and whose trace_id is the rollout's
// (the guide's derivation and traceparent agree with the proxy's, SPEC §0).
func TestTypeScriptClients(t *testing.T) {
	upstream := startUpstream(t, fakemodel.WithFault(tsFaults))
	id := rolloutID(t)
	direct := runTS(t, nil, "calls", upstream.URL, id, "direct")
	require.Len(t, direct, len(tsWant))
	for i, c := range direct {
		assert.Equal(t, tsWant[i].name, c.Name)
		assert.Nil(t, c.ModelCallID, "%s: no model-call id without the proxy", c.Name)
	}
	if *directOnly {
		return
	}
	p := startProxy(t, upstream.URL)
	viaProxy := runTS(t, nil, "calls", p.URL, id, "proxy")
	require.Len(t, viaProxy, len(direct))
	records := readRecords(t, p.capturePath(id))
	require.Len(t, records, len(viaProxy), "one record per call")
	for i, c := range viaProxy {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			want := tsWant[i]
			require.Equal(t, want.name, c.Name)
			assert.JSONEq(t, string(direct[i].Result), string(c.Result), "%s: the SDK's result through the proxy equals the direct one", c.Name)
			f := records[i].Fields
			require.NotNil(t, c.ModelCallID, "%s: the SDK read X-Gymtrace-Model-Call-Id", c.Name)
			assert.Equal(t, *c.ModelCallID, f["model_call_id"], "%s: the header names the call's record", c.Name)
			assert.Equal(t, want.dialect, f["dialect"], c.Name)
			assert.Equal(t, json.Number(want.status), f["status_code"], c.Name)
			assert.Equal(t, want.category, f["error_category"], c.Name)
			assert.Equal(t, rolloutTraceID(id), f["trace_id"], "%s: the rollout's trace", c.Name)
			if want.stream {
				assert.Contains(t, records[i].Keys, "response_raw", c.Name)
			}
			if !want.stream && want.category == nil {
				got := map[string]any{}
				require.NoError(t, json.Unmarshal(c.Result, &got))
				if want.dialect == "responses" {
					delete(got, "output_text") // the openai SDK's convenience property, not in the body
				}
				gotJSON, err := json.Marshal(got)
				require.NoError(t, err)
				recJSON, err := json.Marshal(f["response"])
				require.NoError(t, err)
				assert.JSONEq(t, string(recJSON), string(gotJSON), "%s: the record's response is what the SDK got", c.Name)
			}
		})
	}
}

// TestTypeScriptAgent runs the guide's agent (e2e/ts: `openai` through the proxy, spans from
// `@opentelemetry/sdk-node` with the OTLP/protobuf exporter) with its observation spans exported to
// a real gymtrace-otelcol writing the proxy's capture directory, tagged through the resource
// (OTEL_RESOURCE_ATTRIBUTES) and the span attribute, then `gymtrace attach --strict` on its
// rollout line: the invoke_agent span owns every captured call by model_call_id, the execute_tool
// span is the model's tool call, and there is no gap.
func TestTypeScriptAgent(t *testing.T) {
	if *directOnly {
		tsRunner(t) // compiles; the agent needs the proxy
		return
	}
	// The proxy binary exports its model-call spans to recv, so the test sees their parents.
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	p := startProxy(t, startUpstream(t).URL)
	collector := startCollector(t, p.CaptureDir)
	id := rolloutID(t)
	calls := runTS(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=ts-weather-agent",
		"OTEL_RESOURCE_ATTRIBUTES=gymtrace.rollout.id=" + id,
		"OTEL_METRICS_EXPORTER=none",
		"OTEL_LOGS_EXPORTER=none",
	}, "agent", p.URL, id)
	require.Len(t, calls, 2, "the tool call and the answer to its result")

	dir := t.TempDir()
	in, out := filepath.Join(dir, "rollouts.jsonl"), filepath.Join(dir, "rollouts.attached.jsonl")
	require.NoError(t, os.WriteFile(in, fmt.Appendf(nil, "{\"_ng_rollout_id\":%q}\n", id), 0o600))
	attach, err := exec.Command(gymtraceBinary(t), "attach", "--capture-dir", p.CaptureDir,
		"--input", in, "--output", out, "--strict").CombinedOutput()
	require.NoError(t, err, "gymtrace attach --strict: %s", attach)
	line, err := os.ReadFile(out)
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(line))
	sc.Buffer(nil, 16<<20)
	require.True(t, sc.Scan())
	var attached map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(sc.Bytes(), &attached))
	require.False(t, sc.Scan(), "one attached line")
	raw, ok := attached[agentobs.AttachmentKey]
	require.True(t, ok, "attach found the Collector's observations: %s", line)
	bundle, err := agentobs.DecodeBundle(raw)
	require.NoError(t, err)
	assert.Empty(t, bundle.Gaps, "every captured call owned, every reference resolved")

	store, err := capture.NewStore(p.CaptureDir)
	require.NoError(t, err)
	records, err := store.ReadModelCallRecords(id)
	require.NoError(t, err)
	require.Len(t, records, len(calls))
	var inv *agentobs.AgentInvocation
	var tool *agentobs.ToolCallObservation
	for _, r := range bundle.Records {
		switch v := r.(type) {
		case *agentobs.AgentInvocation:
			require.Nil(t, inv, "one invocation")
			inv = v
		case *agentobs.ToolCallObservation:
			require.Nil(t, tool, "one tool call")
			tool = v
		default:
			t.Errorf("unexpected observation %s", r.Kind())
		}
	}
	require.NotNil(t, inv, "the invoke_agent span")
	require.NotNil(t, tool, "the execute_tool span")
	want := make([]agentobs.ModelCallRef, len(records))
	for i, c := range records {
		want[i] = canonicalRef(c)
		assert.Equal(t, *calls[i].ModelCallID, *c.ModelCallID, "call %d: the id the agent read is its record's", i)
	}
	assert.Equal(t, want, inv.ModelCalls, "the invocation owns both calls, in order")
	assert.Equal(t, agentobs.InvocationStatusCompleted, inv.Status)
	require.Len(t, records[0].ToolCalls, 1)
	var callID string
	require.NoError(t, json.Unmarshal(records[0].ToolCalls[0].CallID, &callID))
	assert.Equal(t, callID, tool.ToolCallID, "the tool call is the model's")
	assert.Equal(t, "get_weather", deref(tool.ToolName))
	assert.Equal(t, inv.InvocationID, tool.InvocationID, "the tool call belongs to the invocation")
	require.NotNil(t, tool.DurationMS)

	checkTSAgentTrace(t, p, recv, id, inv.InvocationID)
	if _, err := os.Stat(filepath.Join(p.CaptureDir, id+capture.MarkerFileSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the rollout is marked incomplete: %v", err)
	}
}

// checkTSAgentTrace checks the agent's spans are in the rollout's trace (the guide's derivation and
// traceparent): the Collector's observation lines carry the rollout's trace id, the invoke_agent
// span (whose span id is the invocation id) has the rollout's root span as its parent, the
// execute_tool span the invocation, and — when the proxy runs as the binary and exports its spans —
// each call's model-call span (the capture line's span_id) has the invocation as its parent.
func checkTSAgentTrace(t *testing.T, p *proxyProc, recv *otlpReceiver, id, invocationID string) {
	t.Helper()
	traceID := rolloutTraceID(id)
	obs, err := os.ReadFile(filepath.Join(p.CaptureDir, id+capture.ObservationsFileSuffix))
	require.NoError(t, err, "the Collector wrote the observations file")
	spans := map[string]struct{ TraceID, SpanID, ParentSpanID string }{}
	sc := bufio.NewScanner(bytes.NewReader(obs))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			TraceID      string `json:"trace_id"`
			SpanID       string `json:"span_id"`
			ParentSpanID string `json:"parent_span_id"`
			Name         string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		require.NotContains(t, spans, l.Name, "one line per observation span")
		spans[l.Name] = struct{ TraceID, SpanID, ParentSpanID string }{l.TraceID, l.SpanID, l.ParentSpanID}
	}
	require.Len(t, spans, 2, "the invoke_agent and execute_tool lines: %s", obs)
	inv, tool := spans["invoke_agent weather-agent"], spans["execute_tool get_weather"]
	assert.Equal(t, traceID, inv.TraceID, "the invocation is in the rollout's trace")
	assert.Equal(t, traceID, tool.TraceID, "the tool call is in the rollout's trace")
	assert.Equal(t, rollout.ID{Rollout: id}.RootSpanID().String(), inv.ParentSpanID, "the invocation is under the rollout's root span")
	assert.Equal(t, invocationID, inv.SpanID, "the invocation id is its span id")
	assert.Equal(t, inv.SpanID, tool.ParentSpanID, "the tool call is under the invocation")
	if *inProcess {
		return // the in-process proxy exports no spans
	}
	records := readRecords(t, p.capturePath(id))
	var got []receivedSpan
	require.Eventually(t, func() bool {
		got = recv.trace(traceID)
		return len(got) >= len(records)
	}, 20*time.Second, 50*time.Millisecond, "the proxy's model-call spans arrive")
	byID := map[string]receivedSpan{}
	for _, s := range got {
		byID[s.spanID()] = s
	}
	for i, r := range records {
		s, ok := byID[fmt.Sprint(r.Fields["span_id"])]
		require.True(t, ok, "the proxy exported the span of call %d", i)
		assert.Equal(t, inv.SpanID, s.parentID(), "call %d: the invocation's traceparent made the proxy's span its child", i)
	}
}
