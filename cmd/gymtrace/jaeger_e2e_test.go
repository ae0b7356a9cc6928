package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/internal/testkit/jaegertest"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// e2eCall is one model call the in-test agent makes through the proxy.
type e2eCall struct {
	dialect  string
	path     string
	model    string
	provider string // expected gen_ai.provider.name
	stream   bool
	body     func(text string) string
}

// e2eCalls covers the three dialects, each streamed and not.
var e2eCalls = func() []e2eCall {
	var calls []e2eCall
	for _, stream := range []bool{false, true} {
		s := strconv.FormatBool(stream)
		calls = append(calls,
			e2eCall{dialect: "responses", path: "/v1/responses", model: "gpt-4.1-mini", provider: semconv.GenAIProviderNameOpenAI, stream: stream,
				body: func(text string) string {
					return `{"model":"gpt-4.1-mini","stream":` + s + `,"input":` + strconv.Quote(text) + `}`
				}},
			e2eCall{dialect: "chat", path: "/v1/chat/completions", model: "gpt-4.1-nano", provider: semconv.GenAIProviderNameOpenAI, stream: stream,
				body: func(text string) string {
					opts := ""
					if stream {
						opts = `,"stream_options":{"include_usage":true}`
					}
					return `{"model":"gpt-4.1-nano","stream":` + s + opts + `,"messages":[{"role":"user","content":` + strconv.Quote(text) + `}]}`
				}},
			e2eCall{dialect: "messages", path: "/v1/messages", model: "claude-sonnet-4-5", provider: semconv.GenAIProviderNameAnthropic, stream: stream,
				body: func(text string) string {
					return `{"model":"claude-sonnet-4-5","max_tokens":256,"stream":` + s + `,"messages":[{"role":"user","content":` + strconv.Quote(text) + `}]}`
				}},
		)
	}
	return calls
}()

// payloadKeys are the span attributes `gymtrace proxy --otlp-endpoint` strips by default.
var payloadKeys = []attribute.Key{
	semconv.GymtraceRequestBodyKey, semconv.GymtraceRequestRawKey,
	semconv.GymtraceResponseBodyKey, semconv.GymtraceResponseRawKey,
	semconv.GenAIInputMessagesKey, semconv.GenAIOutputMessagesKey,
}

// TestJaegerEndToEnd is issue 3's acceptance test: real model calls from an instrumented agent go
// through the real `gymtrace proxy --otlp-endpoint` to a fake upstream; both the agent and the proxy
// export to a real Jaeger, and each rollout reads back from /api/traces/<RolloutTraceID> as one
// tree (rollout root → invoke_agent → HTTP client → chat {model}) whose model-call spans carry the
// GenAI attributes, no payloads, and the ids written in the capture records.
func TestJaegerEndToEnd(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // registered first: runs after every other cleanup
	j := jaegertest.FromEnv(t)
	for _, k := range otlpEnvVars {
		t.Setenv(k, "")
	}
	// Jaeger receives traces only: keep the proxy's metrics exporter off.
	t.Setenv("OTEL_METRICS_EXPORTER", "none")

	up := httptest.NewServer(fakemodel.New())
	t.Cleanup(up.Close)
	bin := buildGymtrace(t)
	dir := filepath.Join(t.TempDir(), "caps")
	p := startProxy(t, bin, up.URL, dir, "--otlp-endpoint", j.OTLPHTTPEndpoint)

	suffix := randomHex(t, 6)
	service := "gymtrace-e2e-agent-" + suffix
	tp := newAgentProvider(t, j, service)
	queryFrom := time.Now().Add(-time.Minute)

	rollouts := []string{"e2e-" + suffix + "-0", "e2e-" + suffix + "-1"}
	callIDs := map[string][]string{} // rollout → X-Gymtrace-Model-Call-Id of each call
	for _, rid := range rollouts {
		callIDs[rid] = runAgentRollout(t, tp, p.url, rid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, tp.Shutdown(ctx), "agent spans flushed to Jaeger")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.wait(), "proxy exit (flushes its OTLP batch); stderr: %s", p.stderr)

	// The rollout root, invoke_agent, execute_tool, its sandbox span, the compaction, and per call an
	// HTTP client span and a model-call span.
	wantSpans := 5 + 2*len(e2eCalls)
	for _, rid := range rollouts {
		t.Run(rid, func(t *testing.T) {
			traceID := rollout.ID{Rollout: rid}.TraceID().String()
			tr, err := j.WaitForSpans(ctx, traceID, wantSpans)
			require.NoError(t, err)
			require.Len(t, tr.Spans, wantSpans, "no span beyond the rollout's own")
			assert.Equal(t, traceID, tr.TraceID)
			checkRolloutTree(t, tr, rid, service, callIDs[rid], readCaptureIDs(t, dir, rid))
		})
	}
	t.Run("one trace per rollout", func(t *testing.T) {
		got := searchTraceIDs(t, j, service, queryFrom)
		want := []string{rollout.ID{Rollout: rollouts[0]}.TraceID().String(), rollout.ID{Rollout: rollouts[1]}.TraceID().String()}
		assert.ElementsMatch(t, want, got, "the agent service's traces are exactly the rollouts' derived trace ids")
	})
}

// newAgentProvider returns the agent's TracerProvider: rollout ids, every span sampled, exported
// over OTLP/HTTP to j as service. The test shuts it down (flush); a cleanup does it on failure.
func newAgentProvider(t *testing.T, j jaegertest.Jaeger, service string) *sdktrace.TracerProvider {
	t.Helper()
	transport := &http.Transport{} // ours, so its idle connections close when the test ends
	t.Cleanup(transport.CloseIdleConnections)
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(j.OTLPHTTPEndpoint+"/v1/traces"),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: transport, Timeout: 30 * time.Second}))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))),
	)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) }) // runs before CloseIdleConnections
	return tp
}

// runAgentRollout plays one rollout as an instrumented agent: the rollout root, an invoke_agent span
// and every e2eCall through the proxy with proxy.NewHTTPClient. It returns the model-call ids the
// proxy answered with, in call order.
func runAgentRollout(t *testing.T, tp *sdktrace.TracerProvider, proxyURL, rid string) []string {
	t.Helper()
	ctx, root := proxy.StartRollout(context.Background(), tp, rid)
	require.Equal(t, rollout.ID{Rollout: rid}.RootSpanID(), root.SpanContext().SpanID())
	rec, err := agentobs.NewRecorder(tp, rid)
	require.NoError(t, err)
	actx, inv := rec.StartInvocation(ctx, "e2e-agent")
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client, err := proxy.NewHTTPClient(&http.Client{Transport: agentobs.Transport(transport), Timeout: 30 * time.Second}, proxy.WithClientTracerProvider(tp))
	require.NoError(t, err)
	base, err := rollout.BaseURLForRun(proxyURL, fmt.Appendf(nil, `{"_ng_rollout_id":%q}`, rid))
	require.NoError(t, err)
	require.Equal(t, proxyURL+"/ng-rollout/"+rid, base)

	// A sandboxed tool call between the calls, and the last call as a compaction's summarizing call.
	tctx, tool := agentobs.StartToolCall(actx, "bash", "call-"+rid)
	_, err = agentobs.RunSandboxed(tctx, agentobs.SandboxCommand{Path: "true", Role: agentobs.SandboxRoleEnvironment})
	require.NoError(t, err)
	tool.End(nil)
	cctx, compaction := agentobs.StartCompaction(actx, "auto")

	ids := make([]string, 0, len(e2eCalls))
	for i, c := range e2eCalls {
		callCtx := actx
		if i == len(e2eCalls)-1 {
			callCtx = cctx
		}
		req, err := http.NewRequestWithContext(callCtx, http.MethodPost, base+c.path,
			strings.NewReader(c.body(fmt.Sprintf("rollout %s call %d", rid, i))))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s stream=%v: %s", c.path, c.stream, body)
		if c.stream {
			assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), c.path)
		}
		id := resp.Header.Get("X-Gymtrace-Model-Call-Id")
		require.NotEmpty(t, id, "%s stream=%v: model-call id header", c.path, c.stream)
		ids = append(ids, id)
	}
	compaction.End(agentobs.CompactionResult{})
	inv.End(nil)
	root.End()
	b := rec.Bundle()
	require.Empty(t, b.Gaps)
	return ids
}

// captureIDs is what a capture record says about its model-call span.
type captureIDs struct {
	TraceID    string `json:"trace_id"`
	SpanID     string `json:"span_id"`
	ResponseID string // response.id of the record
}

// readCaptureIDs reads <dir>/<rid>.capture.jsonl into model_call_id → ids.
func readCaptureIDs(t *testing.T, dir, rid string) map[string]captureIDs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rid+".capture.jsonl"))
	require.NoError(t, err)
	out := map[string]captureIDs{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec struct {
			ModelCallID string `json:"model_call_id"`
			TraceID     string `json:"trace_id"`
			SpanID      string `json:"span_id"`
			Response    struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "capture line %s", sc.Bytes())
		require.NotContains(t, out, rec.ModelCallID, "model_call_id repeated")
		out[rec.ModelCallID] = captureIDs{TraceID: rec.TraceID, SpanID: rec.SpanID, ResponseID: rec.Response.ID}
	}
	require.NoError(t, sc.Err())
	return out
}

// checkRolloutTree checks one rollout's trace as Jaeger returns it.
func checkRolloutTree(t *testing.T, tr *jaegertest.Trace, rid, service string, callIDs []string, records map[string]captureIDs) {
	t.Helper()
	traceID := rollout.ID{Rollout: rid}.TraceID().String()
	for _, s := range tr.Spans {
		assert.Equal(t, traceID, s.TraceID, "span %s %s", s.OperationName, s.SpanID)
	}
	serviceOf := func(s jaegertest.Span) string {
		p, ok := tr.ProcessOf(s)
		require.True(t, ok, "process of %s", s.OperationName)
		return p.ServiceName
	}

	// The rollout root: deterministic span id, no parent, the agent's service.
	roots := tr.SpansNamed(proxy.RolloutSpanNamePrefix + rid)
	require.Len(t, roots, 1, "rollout root span")
	root := roots[0]
	assert.Equal(t, rollout.ID{Rollout: rid}.RootSpanID().String(), root.SpanID)
	assert.Empty(t, root.ParentSpanID(), "the rollout root is the trace's root")
	assert.Equal(t, service, serviceOf(root))
	assertTag(t, root, semconv.GymtraceRolloutIDKey, rid)

	agents := tr.SpansNamed(semconv.GenAIOperationNameInvokeAgent + " e2e-agent")
	require.Len(t, agents, 1, "invoke_agent span")
	agent := agents[0]
	assert.Equal(t, root.SpanID, agent.ParentSpanID(), "invoke_agent nests under the rollout root")
	assert.Equal(t, service, serviceOf(agent))
	assertTag(t, agent, semconv.GenAIOperationNameKey, semconv.GenAIOperationNameInvokeAgent)

	// The agent's observation spans (agentobs): tool call → sandbox run, and the compaction.
	tools := tr.SpansNamed("execute_tool bash")
	require.Len(t, tools, 1, "execute_tool span")
	assert.Equal(t, agent.SpanID, tools[0].ParentSpanID())
	assertTag(t, tools[0], semconv.GenAIToolCallIDKey, "call-"+rid)
	sandboxes := tr.SpansNamed("sandbox environment")
	require.Len(t, sandboxes, 1, "sandbox span")
	assert.Equal(t, tools[0].SpanID, sandboxes[0].ParentSpanID())
	var compaction jaegertest.Span
	for _, s := range tr.Spans {
		if kv, ok := s.Tag(string(semconv.GenAIConversationCompactedKey)); ok && kv.Value == true {
			compaction = s
		}
	}
	require.NotEmpty(t, compaction.SpanID, "compaction span (gen_ai.conversation.compacted=true)")
	assert.Equal(t, agent.SpanID, compaction.ParentSpanID())

	// Every model-call span: GenAI attributes, no payloads, under an agent HTTP client span under
	// invoke_agent, with the ids of its capture record.
	seen := map[string]bool{}
	for _, c := range e2eCalls {
		spans := tr.SpansNamed(semconv.ChatSpanName(c.model))
		require.NotEmpty(t, spans, "span %q", semconv.ChatSpanName(c.model))
		for _, s := range spans {
			stream, _ := s.Tag(string(semconv.GenAIRequestStreamKey))
			if (stream.Value == true) != c.stream || seen[s.SpanID] {
				continue
			}
			seen[s.SpanID] = true
			t.Run(fmt.Sprintf("%s stream=%v", c.dialect, c.stream), func(t *testing.T) {
				assert.Equal(t, "gymtrace-proxy", serviceOf(s))
				assertTag(t, s, "span.kind", "client")
				assertTag(t, s, semconv.GenAIOperationNameKey, semconv.GenAIOperationNameChat)
				assertTag(t, s, semconv.GenAIProviderNameKey, c.provider)
				assertTag(t, s, semconv.GenAIRequestModelKey, c.model)
				assertTag(t, s, semconv.GymtraceRolloutIDKey, rid)
				assertTag(t, s, semconv.GymtraceDialectKey, c.dialect)
				for _, k := range []attribute.Key{semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey} {
					kv, ok := s.Tag(string(k))
					if assert.True(t, ok, "%s present", k) {
						assert.Equal(t, "int64", kv.Type, k)
						n, err := strconv.ParseInt(fmt.Sprint(kv.Value), 10, 64)
						assert.NoError(t, err, k)
						assert.Positive(t, n, k)
					}
				}
				for _, k := range payloadKeys {
					_, ok := s.Tag(string(k))
					assert.False(t, ok, "payload attribute %s stripped by default", k)
				}
				_, ok := s.Tag(string(semconv.GymtraceRequestBodySizeKey))
				assert.True(t, ok, "payload sizes kept")

				client, ok := tr.Span(s.ParentSpanID())
				require.True(t, ok, "parent %q of the model-call span is in the trace", s.ParentSpanID())
				assertTag(t, client, "span.kind", "client")
				assert.Equal(t, service, serviceOf(client), "the parent is the agent's HTTP client span")
				assert.Contains(t, []string{agent.SpanID, compaction.SpanID}, client.ParentSpanID(),
					"the HTTP client span nests under invoke_agent (or its compaction)")

				callTag, ok := s.Tag(string(semconv.GymtraceModelCallIDKey))
				require.True(t, ok, "gymtrace.model_call.id present")
				callID, _ := callTag.Value.(string)
				assert.Contains(t, callIDs, callID, "the id the proxy answered with")
				rec, ok := records[callID]
				require.True(t, ok, "capture record of model call %s", callID)
				assert.Equal(t, traceID, rec.TraceID, "record trace_id")
				assert.Equal(t, s.SpanID, rec.SpanID, "record span_id is the model-call span's")
				require.NotEmpty(t, rec.ResponseID)
				assertTag(t, s, semconv.GenAIResponseIDKey, rec.ResponseID)
			})
		}
	}
	assert.Len(t, seen, len(e2eCalls), "one model-call span per call")
	assert.Len(t, records, len(e2eCalls), "one capture record per call")
}

// assertTag checks that s has the string-or-bool tag key = want.
func assertTag[K ~string](t *testing.T, s jaegertest.Span, key K, want any) {
	t.Helper()
	kv, ok := s.Tag(string(key))
	if assert.True(t, ok, "span %s: tag %s present", s.OperationName, key) {
		assert.Equal(t, want, kv.Value, "span %s: tag %s", s.OperationName, key)
	}
}

// searchTraceIDs returns the ids of the traces Jaeger holds for service since from.
func searchTraceIDs(t *testing.T, j jaegertest.Jaeger, service string, from time.Time) []string {
	t.Helper()
	q := url.Values{
		"service": {service},
		"start":   {strconv.FormatInt(from.UnixMicro(), 10)},
		"end":     {strconv.FormatInt(time.Now().Add(time.Minute).UnixMicro(), 10)},
		"limit":   {"100"},
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(j.QueryURL + "/api/traces?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var r struct {
		Data []struct {
			TraceID string `json:"traceID"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &r))
	ids := make([]string, 0, len(r.Data))
	for _, d := range r.Data {
		ids = append(ids, d.TraceID)
	}
	return ids
}

// randomHex returns n random bytes as hex, so runs sharing one Jaeger never mix.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
