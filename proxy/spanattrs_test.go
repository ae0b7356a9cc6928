package proxy

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

var updateSpanGolden = flag.Bool("update-span-golden", false, "rewrite the model-call span golden files under testdata/spanattrs/")

// stepClock is a deterministic clock: every reading is 125 ms after the previous one.
func stepClock() func() (time.Time, time.Duration) {
	var mu sync.Mutex
	n := 0
	base := time.Date(2026, 8, 12, 10, 0, 0, 0, time.UTC)
	return func() (time.Time, time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		n++
		d := time.Duration(n) * 125 * time.Millisecond
		return base.Add(d), d
	}
}

const goldenModelCallID = "0123456789abcdef0123456789abcdef"

// spanCase is one model call through the proxy (or, for exception, the capture middleware).
type spanCase struct {
	name, path, body string
	// upstream answers the call; nil means the upstream is unreachable (dial refused).
	upstream http.HandlerFunc
	// next, when set, is served by CaptureHandler instead of a proxy.
	next http.HandlerFunc
	// clientLeaves makes the client read this many bytes and then go away.
	clientLeaves int
	opts         []Option
}

func writeJSONBody(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func writeSSE(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			flush(w)
		}
	}
}

func sseEvent(name, data string) string {
	if name == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + name + "\ndata: " + data + "\n\n"
}

const (
	goldenResponsesRequest = `{"model":"gpt-test","instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"weather in Paris?"}]}],` +
		`"temperature":0.2,"top_p":0.9,"max_output_tokens":256,"previous_response_id":"resp_prev","reasoning":{"effort":"low","summary":"auto"}}`
	goldenResponsesResponse = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-test-2026","output":[` +
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"look it up"}]},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"}],` +
		`"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":32},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":8},"total_tokens":52}}`
	goldenChatRequest = `{"model":"chat-test","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"clock","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"noon"}],` +
		`"max_completion_tokens":128,"seed":7,"stop":["END"],"frequency_penalty":0.5,"presence_penalty":0.25,"n":1,"reasoning_effort":"medium"}`
	goldenChatResponse = `{"id":"chatcmpl-1","object":"chat.completion","model":"chat-test-0613","choices":[{"index":0,"message":{"role":"assistant","content":"It is noon."},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":30,"completion_tokens":5,"total_tokens":35,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	goldenMessagesRequest = `{"model":"claude-test","max_tokens":1024,"system":"be brief","temperature":0.7,"top_k":40,"stop_sequences":["\n\nHuman:"],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"2+2?"}]}]}`
	goldenMessagesResponse = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-1","content":[{"type":"thinking","thinking":"easy","signature":"sig"},{"type":"text","text":"4"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":200,"output_tokens":3}}`
)

func withStream(body string) string {
	return strings.Replace(body, `{"model":`, `{"stream":true,"model":`, 1)
}

func spanCases() []spanCase {
	chatStreamReq := strings.Replace(withStream(goldenChatRequest), `"n":1`, `"stream_options":{"include_usage":true}`, 1)
	return []spanCase{
		{name: "responses", path: "/v1/responses", body: goldenResponsesRequest, upstream: writeJSONBody(200, goldenResponsesResponse)},
		{name: "responses_stream", path: "/v1/responses", body: withStream(goldenResponsesRequest), upstream: writeSSE(
			sseEvent("response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","model":"gpt-test-2026","output":[]}}`),
			sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Sunny"}`),
			sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-test-2026",`+
				`"output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Sunny"}]}],"usage":{"input_tokens":40,"output_tokens":1,"total_tokens":41}}}`),
		)},
		{name: "chat", path: "/v1/chat/completions", body: goldenChatRequest, upstream: writeJSONBody(200, goldenChatResponse)},
		{name: "chat_stream", path: "/v1/chat/completions", body: chatStreamReq, upstream: writeSSE(
			sseEvent("", `{"id":"chatcmpl-2","model":"chat-test-0613","choices":[{"index":0,"delta":{"role":"assistant","content":"It is "}}]}`),
			sseEvent("", `{"id":"chatcmpl-2","model":"chat-test-0613","choices":[{"index":0,"delta":{"content":"noon."},"finish_reason":"stop"}]}`),
			sseEvent("", `{"id":"chatcmpl-2","model":"chat-test-0613","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":3,"total_tokens":33}}`),
			chatDone,
		)},
		{name: "messages", path: "/v1/messages", body: goldenMessagesRequest, upstream: writeJSONBody(200, goldenMessagesResponse)},
		{name: "messages_stream", path: "/v1/messages", body: withStream(goldenMessagesRequest), upstream: writeSSE(
			sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-test-1","content":[],"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":300,"output_tokens":1}}}`),
			sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"4"}}`),
			sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`),
			sseEvent("message_stop", `{"type":"message_stop"}`),
		)},

		// Each error category the proxy can reach (SPEC §3.3, §0 D3/D5), exception via the middleware.
		{name: "timeout", path: "/v1/responses", body: goldenResponsesRequest, opts: []Option{WithResponseHeaderTimeout(50 * time.Millisecond)},
			upstream: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
		{name: "rate_limit", path: "/v1/chat/completions", body: goldenChatRequest,
			upstream: writeJSONBody(429, `{"error":{"message":"slow down","type":"rate_limit_exceeded","param":null,"code":null}}`)},
		{name: "auth", path: "/v1/messages", body: goldenMessagesRequest,
			upstream: writeJSONBody(401, `{"type":"error","error":{"type":"authentication_error","message":"bad key"}}`)},
		{name: "not_found", path: "/v1/responses", body: goldenResponsesRequest,
			upstream: writeJSONBody(404, `{"error":{"message":"no such model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`)},
		{name: "client_error", path: "/v1/chat/completions", body: goldenChatRequest,
			upstream: writeJSONBody(400, `{"error":{"message":"bad request","type":"invalid_request_error","param":null,"code":null}}`)},
		{name: "upstream_error", path: "/v1/responses", body: goldenResponsesRequest,
			upstream: writeJSONBody(500, `{"error":{"message":"internal","type":"server_error","param":null,"code":null}}`)},
		{name: "upstream_error_stream", path: "/v1/messages", body: withStream(goldenMessagesRequest), upstream: writeSSE(
			sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-test-1","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`),
			sseEvent("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		)},
		{name: "incomplete", path: "/v1/responses", body: withStream(goldenResponsesRequest), upstream: writeSSE(
			sseEvent("response.created", `{"type":"response.created","response":{"id":"resp_2","status":"in_progress","model":"gpt-test-2026","output":[]}}`),
			sseEvent("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_2","object":"response","status":"incomplete","model":"gpt-test-2026",`+
				`"incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Sun"}]}],"usage":{"input_tokens":40,"output_tokens":256,"total_tokens":296}}}`),
		)},
		{name: "stream_truncated", path: "/v1/chat/completions", body: withStream(goldenChatRequest), upstream: writeSSE(chatEvent1)},
		{name: "capture_parse_error", path: "/v1/chat/completions", body: goldenChatRequest, upstream: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "upstream says: not json")
		}},
		{name: "connection", path: "/v1/chat/completions", body: goldenChatRequest, upstream: nil},
		{name: "cancelled", path: "/v1/chat/completions", body: withStream(goldenChatRequest), clientLeaves: len(chatEvent1),
			upstream: func(w http.ResponseWriter, r *http.Request) {
				sseHeaders(w)
				_, _ = io.WriteString(w, chatEvent1)
				flush(w)
				<-r.Context().Done()
			}},
		{name: "exception", path: "/v1/responses", body: goldenResponsesRequest,
			next: func(w http.ResponseWriter, r *http.Request) { panic(fmt.Errorf("model server bug")) }},
	}
}

// refusedURL returns the URL of a 127.0.0.1 port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// runSpanCase sends the case's call and returns its one model-call span.
func runSpanCase(t *testing.T, c spanCase, opts ...Option) tracetest.SpanStub {
	t.Helper()
	opts = append([]Option{withClock(stepClock()), withModelCallID(func() string { return goldenModelCallID })}, opts...)
	opts = append(opts, c.opts...)
	var env *testEnv
	switch {
	case c.next != nil:
		env = newCaptureEnv(t, c.next, nil, opts...)
	case c.upstream == nil:
		env = newProxyEnv(t, refusedURL(t), nil, opts...)
	default:
		env = newProxyEnv(t, newUpstream(t, c.upstream).URL, nil, opts...)
	}
	path := "/ng-rollout/golden-1" + c.path
	if c.clientLeaves > 0 {
		ctx, cancel := context.WithCancel(t.Context())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+path, strings.NewReader(c.body))
		require.NoError(t, err)
		resp, err := env.client.Do(req)
		require.NoError(t, err)
		_, err = io.ReadFull(resp.Body, make([]byte, c.clientLeaves))
		require.NoError(t, err)
		cancel()
		resp.Body.Close()
	} else {
		_, _, _ = env.post(t, path, c.body, nil) // failures are the point of some cases
	}
	waitFor(t, "the model-call span", func() bool { return len(env.spans.GetSpans()) == 1 })
	return env.spans.GetSpans()[0]
}

// spanGolden renders a span as sorted lines: identity, name, kind, status, links, then one line per
// attribute "key TYPE value" (strings quoted, slices as JSON). server.port is the test server's
// random port, written as <port>.
func spanGolden(s tracetest.SpanStub) string {
	var b strings.Builder
	fmt.Fprintf(&b, "span.trace_id %s\n", s.SpanContext.TraceID())
	fmt.Fprintf(&b, "span.parent_span_id %s\n", s.Parent.SpanID())
	fmt.Fprintf(&b, "span.name %q\n", s.Name)
	fmt.Fprintf(&b, "span.kind %s\n", s.SpanKind)
	fmt.Fprintf(&b, "span.status %s %q\n", s.Status.Code, s.Status.Description)
	fmt.Fprintf(&b, "span.links %d\n", len(s.Links))
	fmt.Fprintf(&b, "span.dropped_attributes %d\n", s.DroppedAttributes)
	lines := make([]string, 0, len(s.Attributes))
	for _, kv := range s.Attributes {
		lines = append(lines, fmt.Sprintf("%s %s %s", kv.Key, kv.Value.Type(), goldenValue(kv)))
	}
	slices.Sort(lines)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func goldenValue(kv attribute.KeyValue) string {
	if kv.Key == semconv.ServerPortKey {
		return "<port>"
	}
	switch kv.Value.Type() {
	case attribute.STRING:
		return strconv.Quote(kv.Value.AsString())
	case attribute.STRINGSLICE:
		j, _ := json.Marshal(kv.Value.AsStringSlice())
		return string(j)
	}
	return kv.Value.Emit()
}

// TestModelCallSpanGolden pins every attribute (and the name, kind, status and parent) of the
// model-call span for each dialect, streamed and not, for success and each error category, under
// both GenAI conventions versions, with message content on (SPEC §0 "Spans"). Regenerate with
// go test ./proxy -run TestModelCallSpanGolden -update-span-golden.
func TestModelCallSpanGolden(t *testing.T) {
	for _, conv := range []semconv.GenAIConventions{semconv.GenAIConventionsV1_41, semconv.GenAIConventionsLatestExperimental} {
		for _, c := range spanCases() {
			t.Run(c.name+"/"+conv.String(), func(t *testing.T) {
				s := runSpanCase(t, c, WithGenAIConventions(conv), WithMessageContent(true))
				got := spanGolden(s)
				file := filepath.Join("testdata", "spanattrs", c.name+"."+conv.String()+".golden")
				if *updateSpanGolden {
					require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
					require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				}
				want, err := os.ReadFile(file)
				require.NoError(t, err, "golden file (regenerate with -update-span-golden)")
				assert.Equal(t, string(want), got)
				checkSpanInvariants(t, c, s)
			})
		}
	}
}

// checkSpanInvariants states the rules the goldens must follow, so a wrong golden cannot be
// accepted by -update alone.
func checkSpanInvariants(t *testing.T, c spanCase, s tracetest.SpanStub) {
	t.Helper()
	a := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		a[kv.Key] = kv.Value
	}
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.Equal(t, rollout.ID{Rollout: "golden-1"}.TraceID(), s.SpanContext.TraceID())
	assert.Equal(t, semconv.ChatSpanName(a[semconv.GenAIRequestModelKey].AsString()), s.Name, "name is {operation} {model}")
	category := a[semconv.GymtraceErrorCategoryKey].AsString()
	switch c.name {
	case "responses", "responses_stream", "chat", "chat_stream", "messages", "messages_stream":
		assert.Empty(t, category, "success")
	default:
		assert.True(t, strings.HasPrefix(c.name, category) && category != "", "case %s records %q", c.name, category)
	}
	if category != "" {
		assert.Equal(t, codes.Error, s.Status.Code, "status Error on failure")
		assert.Equal(t, category, a[semconv.ErrorTypeKey].AsString(), "error.type is the error category")
		assert.Equal(t, category, s.Status.Description)
	} else {
		assert.Equal(t, codes.Unset, s.Status.Code)
		assert.NotContains(t, a, semconv.ErrorTypeKey)
	}
	if c.next == nil { // the proxy's upstream; the middleware has no upstream address
		assert.Equal(t, "127.0.0.1", a[semconv.ServerAddressKey].AsString())
		assert.Contains(t, a, semconv.ServerPortKey)
	} else {
		assert.NotContains(t, a, semconv.ServerAddressKey)
	}
	for _, k := range []attribute.Key{semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey} {
		if v, ok := a[k]; ok {
			assert.GreaterOrEqual(t, v.AsInt64(), int64(0))
		}
	}
	// The record rebuilt from the span is the record written (the durable path uses the same span).
	_, problems, err := capture.ExchangeFromAttributes(attrLookup(s.Attributes), s.StartTime, s.EndTime)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

type attrLookup []attribute.KeyValue

func (l attrLookup) Lookup(key string) (attribute.Value, bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if string(l[i].Key) == key {
			return l[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// TestModelCallSpanWithoutMessageContent: without WithMessageContent the span is the golden span
// minus the content attributes, nothing else.
func TestModelCallSpanWithoutMessageContent(t *testing.T) {
	content := map[attribute.Key]bool{
		semconv.GenAIInputMessagesKey: true, semconv.GenAIOutputMessagesKey: true, semconv.GenAISystemInstructionsKey: true,
	}
	for _, c := range spanCases() {
		t.Run(c.name, func(t *testing.T) {
			with := runSpanCase(t, c, WithGenAIConventions(semconv.GenAIConventionsV1_41), WithMessageContent(true))
			without := runSpanCase(t, c, WithGenAIConventions(semconv.GenAIConventionsV1_41))
			var want []attribute.KeyValue
			for _, kv := range with.Attributes {
				if !content[kv.Key] {
					want = append(want, kv)
				}
			}
			with.Attributes = want
			assert.Equal(t, spanGolden(with), spanGolden(without))
		})
	}
}

// TestGenAIConventionsSelection: the conventions version comes from OTEL_SEMCONV_STABILITY_OPT_IN,
// read once at construction, unless WithGenAIConventions fixes it.
func TestGenAIConventionsSelection(t *testing.T) {
	messages := spanCases()[4]
	require.Equal(t, "messages", messages.name)
	tests := []struct {
		name   string
		optIn  string
		opts   []Option
		want   attribute.Key
		absent attribute.Key
	}{
		{name: "unset: v1.41.0", optIn: "", want: semconv.GenAIUsageCacheCreationInputTokensKey, absent: semconv.GenAIUsageCacheWriteInputTokensKey},
		{name: "other categories only", optIn: "http,database", want: semconv.GenAIUsageCacheCreationInputTokensKey, absent: semconv.GenAIUsageCacheWriteInputTokensKey},
		{name: "latest experimental among others", optIn: "http, gen_ai_latest_experimental", want: semconv.GenAIUsageCacheWriteInputTokensKey, absent: semconv.GenAIUsageCacheCreationInputTokensKey},
		{name: "option wins over the environment", optIn: "gen_ai_latest_experimental", opts: []Option{WithGenAIConventions(semconv.GenAIConventionsV1_41)},
			want: semconv.GenAIUsageCacheCreationInputTokensKey, absent: semconv.GenAIUsageCacheWriteInputTokensKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookups := 0
			getenv := func(k string) string {
				lookups++
				if k == semconv.StabilityOptInEnv {
					return tt.optIn
				}
				return ""
			}
			s := runSpanCase(t, messages, append([]Option{withGetenv(getenv)}, tt.opts...)...)
			a := attrLookup(s.Attributes)
			v, ok := a.Lookup(string(tt.want))
			require.True(t, ok, "%s present", tt.want)
			assert.Equal(t, int64(100), v.AsInt64())
			_, ok = a.Lookup(string(tt.absent))
			assert.False(t, ok, "%s absent", tt.absent)
			assert.LessOrEqual(t, lookups, 1, "the environment is read once, at construction")
		})
	}
	t.Run("process environment", func(t *testing.T) {
		t.Setenv(semconv.StabilityOptInEnv, "gen_ai_latest_experimental")
		s := runSpanCase(t, messages)
		_, ok := attrLookup(s.Attributes).Lookup(string(semconv.GenAIUsageCacheWriteInputTokensKey))
		assert.True(t, ok)
	})
}

// TestCaptureIgnoresEnvAttributeLimits (issue 3 part 4): the handler's own provider never cuts or
// drops attributes, whatever OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT / OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT say:
// the record is whole, the rollout is not marked incomplete, and exported spans carry the payloads
// whole.
func TestCaptureIgnoresEnvAttributeLimits(t *testing.T) {
	for _, env := range [][2]string{
		{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "10"},
		{"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "10"},
		{"OTEL_ATTRIBUTE_COUNT_LIMIT", "5"},
		{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "5"},
	} {
		t.Run(env[0]+"="+env[1], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			up := newUpstream(t, writeJSONBody(200, goldenChatResponse))
			e := newProxyEnv(t, up.URL, nil, WithMessageContent(true))
			_, _, err := e.post(t, "/ng-rollout/limits/v1/chat/completions", goldenChatRequest, nil)
			require.NoError(t, err)
			rec := e.record(t, "limits")
			_, lines := e.records(t, "limits")
			assert.Contains(t, lines[0], `"request":`+goldenChatRequest+`,"response":`+goldenChatResponse)
			assert.NotNil(t, rec["response"])
			marked, err := e.store.IsIncomplete("limits")
			require.NoError(t, err)
			assert.False(t, marked)
			spans := e.spans.GetSpans()
			require.Len(t, spans, 1)
			assert.Zero(t, spans[0].DroppedAttributes)
			a := attrLookup(spans[0].Attributes)
			body, ok := a.Lookup(string(semconv.GymtraceRequestBodyKey))
			require.True(t, ok)
			assert.Equal(t, goldenChatRequest, body.AsString())
		})
	}
}
