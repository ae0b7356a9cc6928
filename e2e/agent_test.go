package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

var (
	agentBuildOnce sync.Once
	agentBuildErr  error
)

// agentBinary builds the example agent (../examples/agent, a module of its own) once per run and
// returns its path.
func agentBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "agent")
	agentBuildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-C", "../examples/agent", "-o", bin, ".").CombinedOutput()
		if err != nil {
			agentBuildErr = fmt.Errorf("go build examples/agent: %w\n%s", err, out)
		}
	})
	require.NoError(t, agentBuildErr)
	return bin
}

// Names the example agent gives its spans and records (examples/agent).
const (
	agentService   = "gymtrace-example-agent"
	agentSpanName  = "invoke_agent workload-agent"
	toolName       = "run_workload"
	toolSpanName   = "execute_tool " + toolName
	sandboxSpan    = "sandbox agent"
	compactionSpan = "context_compaction"
)

// receivedSpan is one span an OTLP receiver got, with the service.name of its resource.
type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func (s receivedSpan) spanID() string   { return hex.EncodeToString(s.span.GetSpanId()) }
func (s receivedSpan) parentID() string { return hex.EncodeToString(s.span.GetParentSpanId()) }
func (s receivedSpan) traceID() string  { return hex.EncodeToString(s.span.GetTraceId()) }

// attr returns the span's attribute key as a string (its string, int or bool value), "" when absent.
func (s receivedSpan) attr(key string) string {
	for _, kv := range s.span.GetAttributes() {
		if kv.GetKey() == key {
			return anyValueString(kv.GetValue())
		}
	}
	return ""
}

func anyValueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return ""
}

// otlpReceiver is a minimal OTLP/HTTP (protobuf) trace receiver on 127.0.0.1 that keeps every span
// it is sent; it answers metrics exports with an empty success. It stops at the end of the test.
type otlpReceiver struct {
	URL   string
	mu    sync.Mutex
	spans []receivedSpan
	errs  []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Empty(t, r.errs, "OTLP requests the receiver could not decode")
	})
	r.URL = srv.URL
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	fail := func(msg string) {
		r.mu.Lock()
		r.errs = append(r.errs, msg)
		r.mu.Unlock()
		http.Error(w, msg, http.StatusBadRequest)
	}
	if req.Method != http.MethodPost {
		fail(req.Method + " " + req.URL.Path)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			fail("gzip: " + err.Error())
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		fail("read: " + err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	switch req.URL.Path {
	case "/v1/traces":
		var ex coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &ex); err != nil {
			fail("decode traces: " + err.Error())
			return
		}
		r.mu.Lock()
		for _, rs := range ex.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = anyValueString(kv.GetValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					r.spans = append(r.spans, receivedSpan{service: service, span: s})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	case "/v1/metrics":
		// An empty ExportMetricsServiceResponse.
	default:
		fail("path " + req.URL.Path)
	}
}

// trace returns the spans received so far with trace id traceID.
func (r *otlpReceiver) trace(traceID string) []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedSpan
	for _, s := range r.spans {
		if s.traceID() == traceID {
			out = append(out, s)
		}
	}
	return out
}

// agentRun is one run of the example agent and of `gymtrace attach` on its rollout line.
type agentRun struct {
	line     []byte                          // the agent's rollout line (stdout)
	own      agentobs.AgentObservationBundle // the recorder's bundle (--bundle-out), before any join
	attached map[string]json.RawMessage      // the attached rollout line
	calls    []capture.ModelCallRecord       // the rollout's captured calls
	records  []record                        // the raw capture lines
}

// runAgent runs the agent for rollout id through proxy p, exporting its spans to recv, then
// `gymtrace attach` on its rollout line.
func runAgent(t *testing.T, p *proxyProc, recv *otlpReceiver, id string, embed bool) agentRun {
	t.Helper()
	dir := t.TempDir()
	bundlePath := filepath.Join(dir, "bundle.json")
	args := []string{
		"--base-url", p.URL, "--rollout-id", id, "--capture-dir", p.CaptureDir,
		"--otlp-endpoint", recv.URL, "--bundle-out", bundlePath,
	}
	if embed {
		args = append(args, "--embed-observations")
	}
	c, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, agentBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "agent stderr:\n%s", stderr.String())
	t.Logf("agent stderr:\n%s", stderr.String())

	var run agentRun
	run.line = stdout.Bytes()
	require.Equal(t, 1, bytes.Count(run.line, []byte("\n")), "one rollout line: %s", run.line)
	own, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	run.own, err = agentobs.DecodeBundle(own)
	require.NoError(t, err, "the agent's bundle is a valid ng_agent_observations value")

	in, out := filepath.Join(dir, "rollouts.jsonl"), filepath.Join(dir, "rollouts.attached.jsonl")
	require.NoError(t, os.WriteFile(in, run.line, 0o600))
	attach := exec.Command(gymtraceBinary(t), "attach", "--capture-dir", p.CaptureDir, "--input", in, "--output", out, "--strict")
	outText, err := attach.CombinedOutput()
	require.NoError(t, err, "gymtrace attach: %s", outText)
	attached, err := os.ReadFile(out)
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(attached))
	sc.Buffer(nil, 16<<20)
	require.True(t, sc.Scan(), "the attached file has the line")
	require.NoError(t, json.Unmarshal(sc.Bytes(), &run.attached))
	require.False(t, sc.Scan(), "the attached file has one line")

	store, err := capture.NewStore(p.CaptureDir)
	require.NoError(t, err)
	run.calls, err = store.ReadModelCallRecords(id)
	require.NoError(t, err)
	run.records = readRecords(t, p.capturePath(id))
	return run
}

// TestAgent runs the example agent (examples/agent: openai-go through the rollout prefix, the
// agentobs recorder, a sandboxed tool, a compaction) against the real `gymtrace proxy` in front of
// the fake model, then `gymtrace attach` on its rollout line, and checks issue 4's "Done when": the
// attached ng_agent_observations resolve every reference to a captured call's model_call_id with no
// ownership or reference gap, the tool call has a duration, the sandbox values are measured (64 MiB
// touched → peak_memory_mib >= 64; 0.5 s of CPU burnt → cpu_time_s >= 0.4), and the invocation,
// tool, compaction and sandbox spans are in the rollout's trace under its root (received over
// OTLP/HTTP from the agent, and from the proxy when it runs as the binary).
func TestAgent(t *testing.T) {
	t.Run("sandboxed_workload", func(t *testing.T) {
		// The tool's command alone, measured by agentobs.RunSandboxed as the agent runs it.
		var out bytes.Buffer
		obs, err := agentobs.RunSandboxed(t.Context(), agentobs.SandboxCommand{
			Path: agentBinary(t), Args: []string{"workload", "--memory-mib", "64", "--cpu-seconds", "0.5"},
			Stdout: &out, Role: agentobs.SandboxRoleAgent, Timeout: 2 * time.Minute,
		})
		require.NoError(t, err)
		checkSandboxMeasured(t, obs)
		var res struct {
			MemoryMiB int     `json:"memory_mib"`
			CPUTimeS  float64 `json:"cpu_time_s"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &res), "the workload prints its result: %s", out.String())
		assert.Equal(t, 64, res.MemoryMiB)
		assert.GreaterOrEqual(t, res.CPUTimeS, 0.5, "the workload burns until its own rusage says 0.5 s")
		assert.GreaterOrEqual(t, *obs.CPUTimeS, res.CPUTimeS-0.01, "the sandbox measured at least what the workload used")
	})
	if *directOnly {
		return // the rest needs the proxy
	}

	upstream := startUpstream(t)
	recv := startOTLPReceiver(t)
	// The proxy binary exports its model-call spans to the same receiver, quickly.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	p := startProxy(t, upstream.URL)

	for _, tc := range []struct {
		name  string
		embed bool // the rollout line carries the bundle; else attach reads the observations file
	}{
		{"observations_in_row", true},
		{"observations_file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := rolloutID(t)
			run := runAgent(t, p, recv, id, tc.embed)
			assert.Equal(t, tc.embed, bytes.Contains(run.line, []byte(`"ng_agent_observations":`)))
			obsPath := filepath.Join(p.CaptureDir, id+capture.ObservationsFileSuffix)
			require.FileExists(t, obsPath, "the agent wrote its observations beside the capture file")

			bundle := checkAttachedObservations(t, run, id)
			checkAgentTrace(t, recv, run, bundle, id)
		})
	}
}

// checkSandboxMeasured checks a sandbox observation of the 64 MiB / 0.5 s workload.
func checkSandboxMeasured(t *testing.T, obs agentobs.SandboxObservation) {
	t.Helper()
	require.NoError(t, obs.Validate())
	assert.Equal(t, agentobs.SandboxRoleAgent, obs.Role)
	assert.Equal(t, agentobs.SandboxOutcomeCompleted, obs.Outcome)
	require.NotNil(t, obs.ExitCode)
	assert.Equal(t, 0, *obs.ExitCode)
	require.NotNil(t, obs.PeakMemoryMiB, "peak memory measured")
	assert.GreaterOrEqual(t, *obs.PeakMemoryMiB, 64.0, "64 MiB touched")
	assert.Less(t, *obs.PeakMemoryMiB, 1024.0, "the peak is measured, not the 1 GiB limit")
	require.NotNil(t, obs.CPUTimeS, "CPU time measured")
	assert.GreaterOrEqual(t, *obs.CPUTimeS, 0.4, "0.5 s of CPU burnt")
	require.NotNil(t, obs.WallTimeS)
	assert.Positive(t, *obs.WallTimeS)
	require.NotNil(t, obs.ResourceUsageSource)
	assert.Contains(t, []string{"rusage", "cgroup_v2"}, *obs.ResourceUsageSource)
}

// observationRecords splits a bundle's records by kind; each kind must appear exactly once.
type observationRecords struct {
	inv     *agentobs.AgentInvocation
	tool    *agentobs.ToolCallObservation
	comp    *agentobs.ContextCompactionObservation
	sandbox *agentobs.SandboxObservation
}

func splitRecords(t *testing.T, b agentobs.AgentObservationBundle) observationRecords {
	t.Helper()
	var r observationRecords
	counts := map[string]int{}
	for _, rec := range b.Records {
		counts[rec.Kind()]++
		switch v := rec.(type) {
		case *agentobs.AgentInvocation:
			r.inv = v
		case *agentobs.ToolCallObservation:
			r.tool = v
		case *agentobs.ContextCompactionObservation:
			r.comp = v
		case *agentobs.SandboxObservation:
			r.sandbox = v
		}
	}
	require.Equal(t, map[string]int{
		agentobs.KindAgentInvocation: 1, agentobs.KindToolCall: 1, agentobs.KindContextCompaction: 1, agentobs.KindSandbox: 1,
	}, counts, "one invocation, tool call, compaction and sandbox")
	return r
}

// canonicalRef is the reference Join gives a captured call.
func canonicalRef(c capture.ModelCallRecord) agentobs.ModelCallRef {
	return agentobs.ModelCallRef{
		ModelCallID: c.ModelCallID,
		ModelRef:    &agentobs.ModelServerRef{Type: c.ModelRef.Type, Name: c.ModelRef.Name},
		ResponseID:  c.ResponseID,
	}
}

// checkAttachedObservations checks the attached line's ng_agent_observations against the captured
// calls and returns the bundle.
func checkAttachedObservations(t *testing.T, run agentRun, id string) agentobs.AgentObservationBundle {
	t.Helper()
	assert.JSONEq(t, fmt.Sprintf("%q", id), string(run.attached["_ng_rollout_id"]))
	require.Contains(t, run.attached, "ng_model_call_capture")
	raw, ok := run.attached[agentobs.AttachmentKey]
	require.True(t, ok, "the attached line has %s", agentobs.AttachmentKey)
	bundle, err := agentobs.DecodeBundle(raw)
	require.NoError(t, err)
	assert.Equal(t, agentobs.BundleSource, bundle.Source)
	assert.Empty(t, bundle.Gaps, "every reference resolved, every captured call owned: no gap")

	// Four captured calls: the tool call, the answer to the tool result, the summary, the final call.
	calls := run.calls
	require.Len(t, calls, 4, "four model calls captured")
	for i, c := range calls {
		require.NotNil(t, c.ModelCallID, "call %d", i)
		require.NotNil(t, c.ModelRef, "call %d", i)
		require.NotNil(t, c.ResponseID, "call %d", i)
		assert.Equal(t, modelServerName, c.ModelRef.Name)
	}
	require.Len(t, calls[0].ToolCalls, 1, "the first answer is one tool call")

	r := splitRecords(t, bundle)
	assert.Equal(t, agentobs.InvocationStatusCompleted, r.inv.Status)
	assert.Nil(t, r.inv.ParentInvocationID, "the root invocation")
	require.NotNil(t, r.inv.DurationMS)
	assert.Positive(t, *r.inv.DurationMS)
	want := make([]agentobs.ModelCallRef, len(calls))
	for i, c := range calls {
		want[i] = canonicalRef(c)
	}
	assert.Equal(t, want, r.inv.ModelCalls, "the invocation owns every captured call, each by its model_call_id, in call order")

	// The tool call: the model's call id, timed by the recorder, in the sandbox.
	var callID string
	require.NoError(t, json.Unmarshal(calls[0].ToolCalls[0].CallID, &callID))
	assert.Equal(t, r.inv.InvocationID, r.tool.InvocationID)
	assert.Equal(t, callID, r.tool.ToolCallID, "the tool call id is the model's")
	assert.Equal(t, toolName, deref(r.tool.ToolName))
	assert.Equal(t, agentobs.ToolCallStatusCompleted, r.tool.Status)
	require.NotNil(t, r.tool.TimingSource)
	assert.Equal(t, agentobs.TimingSourceExecutor, *r.tool.TimingSource)
	require.NotNil(t, r.tool.DurationMS)
	assert.Positive(t, *r.tool.DurationMS, "tool duration > 0")
	require.NotNil(t, r.tool.StartedAt)
	require.NotNil(t, r.tool.CompletedAt)
	assert.GreaterOrEqual(t, *r.tool.CompletedAt, *r.tool.StartedAt)
	assert.Equal(t, "local-"+id, deref(r.tool.SandboxID))

	// The sandbox: measured, inside the tool call's interval.
	checkSandboxMeasured(t, *r.sandbox)
	assert.Equal(t, "local-"+id, deref(r.sandbox.SandboxID))
	assert.LessOrEqual(t, *r.sandbox.WallTimeS*1000, *r.tool.DurationMS+1, "the sandbox ran inside the tool call")

	// The compaction: its summarizing call, the calls around it, its tokens from the usage.
	assert.Equal(t, r.inv.InvocationID, r.comp.InvocationID)
	assert.Equal(t, agentobs.CompactionOutcomeCompleted, r.comp.Outcome)
	assert.Equal(t, "auto", deref(r.comp.Trigger))
	assert.Equal(t, []agentobs.ModelCallRef{want[2]}, r.comp.ModelCalls, "the summarizing call")
	assert.Equal(t, &want[1], r.comp.BeforeModelCall)
	assert.Equal(t, &want[3], r.comp.AfterModelCall)
	require.NotNil(t, r.comp.TokensBefore)
	require.NotNil(t, r.comp.TokensAfter)
	assert.Equal(t, int(*calls[1].TokensIn+*calls[1].TokensOut), *r.comp.TokensBefore, "context size at the last call before")
	reasoning := int64(0)
	if calls[2].TokensReasoning != nil {
		reasoning = *calls[2].TokensReasoning
	}
	assert.Equal(t, int(*calls[2].TokensOut-reasoning), *r.comp.TokensAfter, "the summary's size")
	assert.NotEmpty(t, deref(r.comp.Summary))

	// The join is the attach step's: the agent's own bundle joined with the calls gives the
	// attached bundle (from the line or from the observations file alike), and joining again
	// changes nothing (SPEC D11).
	assert.Equal(t, bundleJSON(t, bundle), bundleJSON(t, agentobs.Join(run.own, calls)), "attach joined what the agent recorded")
	assert.Equal(t, bundleJSON(t, bundle), bundleJSON(t, agentobs.Join(bundle, calls)), "the join is idempotent")
	return bundle
}

// bundleJSON is b's JSON-mode dump (SPEC §6.1), the form in which bundles are compared.
func bundleJSON(t *testing.T, b agentobs.AgentObservationBundle) string {
	t.Helper()
	out, err := b.AppendJSON(nil)
	require.NoError(t, err)
	return string(out)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// checkAgentTrace checks the spans the receiver got for the rollout's trace: the rollout root, the
// observation spans under it in the agent's parent chain, each model call's HTTP client span under
// the invocation or the compaction and, when the proxy runs as the binary, its model-call span
// (the span_id of the capture line) under that client span.
func checkAgentTrace(t *testing.T, recv *otlpReceiver, run agentRun, bundle agentobs.AgentObservationBundle, id string) {
	t.Helper()
	traceID := rolloutTraceID(id)
	wantProxy := 0
	if !*inProcess {
		wantProxy = len(run.calls) // the in-process proxy exports nothing
	}
	var spans []receivedSpan
	require.Eventually(t, func() bool {
		spans = recv.trace(traceID)
		n := 0
		for _, s := range spans {
			if s.service != agentService {
				n++
			}
		}
		return n >= wantProxy
	}, 20*time.Second, 50*time.Millisecond, "the proxy's model-call spans arrive")

	byName := map[string][]receivedSpan{}
	byID := map[string]receivedSpan{}
	var clients []receivedSpan
	for _, s := range spans {
		assert.Equal(t, traceID, s.traceID())
		byID[s.spanID()] = s
		if s.service == agentService {
			byName[s.span.GetName()] = append(byName[s.span.GetName()], s)
			if s.span.GetKind() == tracepb.Span_SPAN_KIND_CLIENT {
				clients = append(clients, s)
			}
		}
	}
	one := func(name string) receivedSpan {
		t.Helper()
		require.Len(t, byName[name], 1, "one %q span of the agent in the rollout's trace", name)
		return byName[name][0]
	}
	root := one(proxy.RolloutSpanNamePrefix + id)
	assert.Equal(t, rollout.ID{Rollout: id}.RootSpanID().String(), root.spanID(), "the rollout root has the rollout's span id")
	assert.Empty(t, root.span.GetParentSpanId())

	r := splitRecords(t, bundle)
	inv := one(agentSpanName)
	assert.Equal(t, root.spanID(), inv.parentID(), "invocation under the rollout root")
	assert.Equal(t, r.inv.InvocationID, inv.spanID(), "the invocation id is its span id")
	assert.Equal(t, "invoke_agent", inv.attr("gen_ai.operation.name"))
	assert.Equal(t, id, inv.attr("gymtrace.rollout.id"))
	tool := one(toolSpanName)
	assert.Equal(t, inv.spanID(), tool.parentID(), "tool call under the invocation")
	assert.Equal(t, r.tool.ToolCallID, tool.attr("gen_ai.tool.call.id"))
	sandbox := one(sandboxSpan)
	assert.Equal(t, tool.spanID(), sandbox.parentID(), "sandbox run under the tool call")
	comp := one(compactionSpan)
	assert.Equal(t, inv.spanID(), comp.parentID(), "compaction under the invocation")
	assert.Equal(t, "true", comp.attr("gen_ai.conversation.compacted"))

	// Each model call's client span, in call order: three under the invocation, the summary under
	// the compaction; the proxy's model-call span (the capture line's span_id) under it.
	require.Len(t, clients, len(run.calls), "one HTTP client span per model call")
	wantParent := []string{inv.spanID(), inv.spanID(), comp.spanID(), inv.spanID()}
	slices.SortFunc(clients, func(a, b receivedSpan) int {
		return cmp.Compare(a.span.GetStartTimeUnixNano(), b.span.GetStartTimeUnixNano())
	})
	for i, c := range clients {
		assert.Equal(t, wantParent[i], c.parentID(), "client span of call %d", i)
		if wantProxy == 0 {
			continue
		}
		spanID, ok := run.records[i].Fields["span_id"].(string)
		require.True(t, ok, "capture line %d has a span_id", i)
		ps, ok := byID[spanID]
		require.True(t, ok, "the proxy exported the span %s of call %d", spanID, i)
		assert.NotEqual(t, agentService, ps.service)
		assert.Equal(t, c.spanID(), ps.parentID(), "the proxy's span of call %d is under the agent's client span", i)
		assert.True(t, strings.HasPrefix(ps.span.GetName(), "chat "), ps.span.GetName())
	}
}
