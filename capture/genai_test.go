package capture

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// requestParamKeys are every key appendRequestAttributes may set.
var requestParamKeys = []attribute.Key{
	semconv.GenAIRequestModelKey, semconv.GenAIRequestStreamKey, semconv.GenAIRequestTemperatureKey,
	semconv.GenAIRequestTopPKey, semconv.GenAIRequestTopKKey, semconv.GenAIRequestMaxTokensKey,
	semconv.GenAIRequestSeedKey, semconv.GenAIRequestFrequencyPenaltyKey, semconv.GenAIRequestPresencePenaltyKey,
	semconv.GenAIRequestStopSequencesKey, semconv.GenAIRequestChoiceCountKey,
	semconv.GenAIRequestPreviousResponseIDKey, semconv.GenAIRequestReasoningLevelKey,
}

// requestParams returns the request-parameter attributes of ExchangeAttributes for a request body.
func requestParamAttrs(t *testing.T, dialect, body string, opts ...AttributeOption) map[attribute.Key]attribute.Value {
	t.Helper()
	req, raw := RequestPayload([]byte(body))
	require.Nil(t, raw, "test request must be a JSON object")
	e := Exchange{ModelCallID: "id", Dialect: dialect, LatencyMS: 1, Request: req}
	got := map[attribute.Key]attribute.Value{}
	m := newAttrMap(ExchangeAttributes(&e, opts...))
	for _, k := range requestParamKeys {
		if v, ok := m.Lookup(string(k)); ok {
			got[k] = v
		}
	}
	return got
}

func values(kvs ...attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestRequestParameterAttributes(t *testing.T) {
	latest := WithConventions(semconv.GenAIConventionsLatestExperimental)
	tests := []struct {
		name, dialect, body string
		opts                []AttributeOption
		want                map[attribute.Key]attribute.Value
	}{
		{
			name: "chat: every parameter", dialect: semconv.DialectChat,
			body: `{"model":"gpt-x","stream":false,"temperature":0.7,"top_p":0.9,"max_tokens":10,"max_completion_tokens":20,` +
				`"seed":42,"frequency_penalty":0.1,"presence_penalty":-0.5,"n":2,"stop":"END","reasoning_effort":"low","messages":[]}`,
			want: values(semconv.GenAIRequestModel("gpt-x"), semconv.GenAIRequestStream(false), semconv.GenAIRequestTemperature(0.7),
				semconv.GenAIRequestTopP(0.9), semconv.GenAIRequestMaxTokens(20), semconv.GenAIRequestSeed(42),
				semconv.GenAIRequestFrequencyPenalty(0.1), semconv.GenAIRequestPresencePenalty(-0.5), semconv.GenAIRequestChoiceCount(2),
				semconv.GenAIRequestStopSequences("END"), semconv.GenAIRequestReasoningLevel("low")),
		},
		{
			name: "chat: legacy max_tokens, stop list, n of 1", dialect: semconv.DialectChat,
			body: `{"model":"m","max_tokens":10,"stop":["a",1,"b"],"n":1}`,
			want: values(semconv.GenAIRequestModel("m"), semconv.GenAIRequestMaxTokens(10), semconv.GenAIRequestStopSequences("a", "b")),
		},
		{
			name: "responses: max_output_tokens, previous response, reasoning effort", dialect: semconv.DialectResponses,
			body: `{"model":"o-x","stream":true,"max_output_tokens":100,"previous_response_id":"resp_1","reasoning":{"effort":"high","summary":"auto"},"top_p":1,"input":"hi"}`,
			want: values(semconv.GenAIRequestModel("o-x"), semconv.GenAIRequestStream(true), semconv.GenAIRequestMaxTokens(100),
				semconv.GenAIRequestPreviousResponseID("resp_1"), semconv.GenAIRequestReasoningLevel("high"), semconv.GenAIRequestTopP(1)),
		},
		{
			name: "messages: top_k as a double under v1.41.0", dialect: semconv.DialectMessages,
			body: `{"model":"claude","max_tokens":1024,"top_k":40,"stop_sequences":["x","y"],"output_config":{"effort":"medium"},"temperature":1,"messages":[]}`,
			want: values(semconv.GenAIRequestModel("claude"), semconv.GenAIRequestMaxTokens(1024), semconv.GenAIRequestTopK(40),
				semconv.GenAIRequestStopSequences("x", "y"), semconv.GenAIRequestReasoningLevel("medium"), semconv.GenAIRequestTemperature(1)),
		},
		{
			name: "messages: top_k as an int under the latest conventions", dialect: semconv.DialectMessages, opts: []AttributeOption{latest},
			body: `{"model":"claude","top_k":40}`,
			want: values(semconv.GenAIRequestModel("claude"), semconv.GenAIRequestTopKKey.Int64(40)),
		},
		{
			name: "mistyped parameters stay absent", dialect: semconv.DialectChat,
			body: `{"model":5,"stream":"yes","temperature":"hot","max_tokens":1.5,"max_completion_tokens":null,"seed":1e3,"n":"2",` +
				`"stop":[],"previous_response_id":"","reasoning_effort":"","reasoning":{"effort":7},"top_p":null}`,
			want: values(),
		},
		{
			name: "escaped keys and the last duplicate", dialect: semconv.DialectChat,
			body: `{"mo\u0064el":"esc","temperature":1,"temperature":0.25}`,
			want: values(semconv.GenAIRequestModel("esc"), semconv.GenAIRequestTemperature(0.25)),
		},
		{
			name: "nested members are not parameters", dialect: semconv.DialectResponses,
			body: `{"input":[{"role":"user","content":"x","temperature":3,"model":"inner"}],"metadata":{"max_tokens":5}}`,
			want: values(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, requestParamAttrs(t, tt.dialect, tt.body, tt.opts...))
		})
	}
}

func TestCacheWriteKeyFollowsConventions(t *testing.T) {
	resp := []byte(`{"id":"msg_1","type":"message","content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":25,"cache_read_input_tokens":50,"output_tokens":2}}`)
	tests := []struct {
		name      string
		opts      []AttributeOption
		key, gone attribute.Key
	}{
		{name: "default is v1.41.0", key: semconv.GenAIUsageCacheCreationInputTokensKey, gone: semconv.GenAIUsageCacheWriteInputTokensKey},
		{name: "v1.41.0", opts: []AttributeOption{WithConventions(semconv.GenAIConventionsV1_41)},
			key: semconv.GenAIUsageCacheCreationInputTokensKey, gone: semconv.GenAIUsageCacheWriteInputTokensKey},
		{name: "latest experimental", opts: []AttributeOption{WithConventions(semconv.GenAIConventionsLatestExperimental)},
			key: semconv.GenAIUsageCacheWriteInputTokensKey, gone: semconv.GenAIUsageCacheCreationInputTokensKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Exchange{ModelCallID: "id", Dialect: semconv.DialectMessages, Response: resp}
			m := newAttrMap(ExchangeAttributes(&e, tt.opts...))
			v, ok := m.Lookup(string(tt.key))
			require.True(t, ok, "%s present", tt.key)
			assert.Equal(t, int64(25), v.AsInt64())
			_, ok = m.Lookup(string(tt.gone))
			assert.False(t, ok, "%s absent", tt.gone)
			in, _ := m.Lookup(string(semconv.GenAIUsageInputTokensKey))
			assert.Equal(t, int64(78), in.AsInt64(), "input includes cache reads and writes (SPEC §3.5)")
		})
	}
}

func TestConversationCompacted(t *testing.T) {
	tests := []struct {
		name, dialect, req, resp string
		want                     bool
	}{
		{name: "responses input compaction item", dialect: semconv.DialectResponses,
			req: `{"model":"m","input":[{"type":"compaction","id":"cmp_1","encrypted_content":"x"},{"role":"user","content":"go on"}]}`, want: true},
		{name: "responses output compaction item", dialect: semconv.DialectResponses,
			req: `{"model":"m","input":"hi"}`, resp: `{"id":"r","output":[{"type":"compaction","id":"cmp_2"}]}`, want: true},
		{name: "anthropic compaction block in history", dialect: semconv.DialectMessages,
			req: `{"model":"c","messages":[{"role":"assistant","content":[{"type":"compaction","content":"summary"}]},{"role":"user","content":"next"}]}`, want: true},
		{name: "anthropic compaction block in the response", dialect: semconv.DialectMessages,
			req: `{"model":"c","messages":[]}`, resp: `{"id":"m","content":[{"type":"compaction","content":"s"},{"type":"text","text":"ok"}]}`, want: true},
		{name: "the word in text is not compaction", dialect: semconv.DialectResponses,
			req: `{"model":"m","input":"explain \"compaction\""}`, resp: `{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"\"compaction\""}]}]}`},
		{name: "plain call", dialect: semconv.DialectChat, req: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, content := range []bool{false, true} {
				e := Exchange{ModelCallID: "id", Dialect: tt.dialect, Request: []byte(tt.req)}
				if tt.resp != "" {
					e.Response = []byte(tt.resp)
				}
				m := newAttrMap(ExchangeAttributes(&e, WithMessageContent(content)))
				v, ok := m.Lookup(string(semconv.GenAIConversationCompactedKey))
				assert.Equal(t, tt.want, ok, "present only when true (content=%v)", content)
				if ok {
					assert.True(t, v.AsBool())
				}
			}
		})
	}
}

func TestMessageContentAttributes(t *testing.T) {
	tests := []struct {
		name, dialect, req, resp    string
		wantSystem, wantIn, wantOut string // "" = absent
	}{
		{
			name: "chat", dialect: semconv.DialectChat,
			req: `{"model":"m","messages":[` +
				`{"role":"system","content":"be brief"},` +
				`{"role":"user","name":"ann","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"a cat"}]}`,
			resp: `{"id":"c1","choices":[` +
				`{"index":0,"message":{"role":"assistant","reasoning_content":"hmm","content":"A cat.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"f","arguments":"not json"}}]},"finish_reason":"tool_calls"},` +
				`{"index":1,"message":{"role":"assistant","content":"Cat"}}]}`,
			wantIn: `[{"role":"system","parts":[{"type":"text","content":"be brief"}]},` +
				`{"role":"user","parts":[{"type":"text","content":"what is this?"},{"type":"blob","modality":"image","mime_type":"image/png","content":"iVBO"},{"type":"uri","modality":"image","uri":"https://x/y.png"}],"name":"ann"},` +
				`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"look","arguments":{"q":1}}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"a cat"}]}]`,
			wantOut: `[{"role":"assistant","parts":[{"type":"reasoning","content":"hmm"},{"type":"text","content":"A cat."},{"type":"tool_call","id":"call_2","name":"f","arguments":"not json"}],"finish_reason":"tool_calls"},` +
				`{"role":"assistant","parts":[{"type":"text","content":"Cat"}],"finish_reason":"error"}]`,
		},
		{
			name: "responses", dialect: semconv.DialectResponses,
			req: `{"model":"m","instructions":"you are terse","input":[` +
				`{"role":"user","content":[{"type":"input_text","text":"weather?"},{"type":"input_image","image_url":"https://x/i.png"}]},` +
				`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"need tool"}]},` +
				`{"type":"function_call","call_id":"fc_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},` +
				`{"type":"function_call_output","call_id":"fc_1","output":"rainy"},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Rainy."}]},` +
				`{"role":"user","content":"thanks"}]}`,
			resp: `{"id":"resp_1","status":"completed","output":[` +
				`{"type":"reasoning","summary":[]},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Welcome."}]},` +
				`{"type":"function_call","call_id":"fc_2","name":"log","arguments":"{}"}]}`,
			wantSystem: `[{"type":"text","content":"you are terse"}]`,
			wantIn: `[{"role":"user","parts":[{"type":"text","content":"weather?"},{"type":"uri","modality":"image","uri":"https://x/i.png"}]},` +
				`{"role":"assistant","parts":[{"type":"reasoning","content":"need tool"},{"type":"tool_call","id":"fc_1","name":"weather","arguments":{"city":"Paris"}}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"fc_1","response":"rainy"}]},` +
				`{"role":"assistant","parts":[{"type":"text","content":"Rainy."}]},` +
				`{"role":"user","parts":[{"type":"text","content":"thanks"}]}]`,
			wantOut: `[{"role":"assistant","parts":[{"type":"text","content":"Welcome."},{"type":"tool_call","id":"fc_2","name":"log","arguments":{}}],"finish_reason":"tool_call"}]`,
		},
		{
			name: "responses: string input, incomplete output", dialect: semconv.DialectResponses,
			req:     `{"model":"m","input":"hi"}`,
			resp:    `{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hel"}]}]}`,
			wantIn:  `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
			wantOut: `[{"role":"assistant","parts":[{"type":"text","content":"Hel"}],"finish_reason":"max_output_tokens"}]`,
		},
		{
			name: "anthropic", dialect: semconv.DialectMessages,
			req: `{"model":"c","system":[{"type":"text","text":"sys"}],"messages":[` +
				`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}},{"type":"text","text":"describe"}]},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"let me see","signature":"s"},{"type":"tool_use","id":"tu_1","name":"zoom","input":{"x":1}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":[{"type":"text","text":"zoomed"}]},{"type":"redacted_thinking","data":"zz"}]}]}`,
			resp:       `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"A dog."}],"stop_reason":"end_turn"}`,
			wantSystem: `[{"type":"text","content":"sys"}]`,
			wantIn: `[{"role":"user","parts":[{"type":"blob","modality":"image","mime_type":"image/jpeg","content":"/9j/"},{"type":"text","content":"describe"}]},` +
				`{"role":"assistant","parts":[{"type":"reasoning","content":"let me see"},{"type":"tool_call","id":"tu_1","name":"zoom","arguments":{"x":1}}]},` +
				`{"role":"user","parts":[{"type":"tool_call_response","id":"tu_1","response":[{"type":"text","text":"zoomed"}]},{"type":"redacted_thinking","data":"zz"}]}]`,
			wantOut: `[{"role":"assistant","parts":[{"type":"text","content":"A dog."}],"finish_reason":"end_turn"}]`,
		},
		{
			name: "anthropic string system and content; error response has no output", dialect: semconv.DialectMessages,
			req:        `{"model":"c","system":"sys","messages":[{"role":"user","content":"hi"}]}`,
			resp:       `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`,
			wantSystem: `[{"type":"text","content":"sys"}]`,
			wantIn:     `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
		},
		{
			name: "chat error response and a request without messages", dialect: semconv.DialectChat,
			req:  `{"model":"m"}`,
			resp: `{"error":{"message":"bad","type":"invalid_request_error"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Exchange{ModelCallID: "id", Dialect: tt.dialect, Request: []byte(tt.req)}
			if tt.resp != "" {
				e.Response = []byte(tt.resp)
			}
			m := newAttrMap(ExchangeAttributes(&e, WithMessageContent(true)))
			for _, c := range []struct {
				k    attribute.Key
				want string
			}{
				{semconv.GenAISystemInstructionsKey, tt.wantSystem},
				{semconv.GenAIInputMessagesKey, tt.wantIn},
				{semconv.GenAIOutputMessagesKey, tt.wantOut},
			} {
				v, ok := m.Lookup(string(c.k))
				if c.want == "" {
					assert.False(t, ok, "%s absent", c.k)
					continue
				}
				if assert.True(t, ok, "%s present", c.k) {
					assert.Equal(t, c.want, v.AsString(), "%s", c.k)
					assert.True(t, json.Valid([]byte(v.AsString())))
				}
			}
			off := newAttrMap(ExchangeAttributes(&e))
			for _, k := range []attribute.Key{semconv.GenAISystemInstructionsKey, semconv.GenAIInputMessagesKey, semconv.GenAIOutputMessagesKey} {
				_, ok := off.Lookup(string(k))
				assert.False(t, ok, "%s only with WithMessageContent", k)
			}
		})
	}
}

// TestMessageContentSchema checks the structural rules of the conventions' message JSON schemas on
// every output: messages have a string role and a parts array; every part has a string type; the
// known part types carry their required fields; output messages carry a string finish_reason.
func TestMessageContentSchema(t *testing.T) {
	for _, c := range []struct{ dialect, req, resp string }{
		{semconv.DialectChat, `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}},{"type":"file","file":{"file_id":"f1"}},{"type":"weird"}]}]}`,
			`{"choices":[{"message":{"content":"x","refusal":"no"},"finish_reason":"stop"}]}`},
		{semconv.DialectResponses, `{"input":[{"type":"input_file"},{"role":"user","content":[{"type":"input_file","file_data":"data:application/pdf;base64,JVBE"},{"type":"input_image","file_id":"f2"}]},{"type":"custom_tool_call","call_id":"c","name":"n","input":"raw"},{"type":"custom_tool_call_output","call_id":"c","output":"o"},{"type":"item_reference","id":"x"}]}`,
			`{"status":"failed","output":[{"type":"web_search_call","id":"ws"}]}`},
		{semconv.DialectMessages, `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://x/d.pdf"}},{"type":"image","source":{"type":"file","file_id":"f3"}}]}]}`,
			`{"content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}`},
	} {
		e := Exchange{ModelCallID: "id", Dialect: c.dialect, Request: []byte(c.req), Response: []byte(c.resp)}
		m := newAttrMap(ExchangeAttributes(&e, WithMessageContent(true)))
		for _, k := range []attribute.Key{semconv.GenAIInputMessagesKey, semconv.GenAIOutputMessagesKey} {
			v, ok := m.Lookup(string(k))
			require.True(t, ok, "%s %s", c.dialect, k)
			var msgs []map[string]any
			require.NoError(t, json.Unmarshal([]byte(v.AsString()), &msgs), "%s %s", c.dialect, k)
			for _, msg := range msgs {
				checkMessage(t, msg, k == semconv.GenAIOutputMessagesKey)
			}
		}
	}
}

func checkMessage(t *testing.T, msg map[string]any, output bool) {
	t.Helper()
	assert.IsType(t, "", msg["role"])
	if output {
		assert.IsType(t, "", msg["finish_reason"])
	}
	parts, ok := msg["parts"].([]any)
	require.True(t, ok, "parts is an array: %v", msg)
	required := map[string][]string{
		"text": {"content"}, "reasoning": {"content"}, "tool_call": {"name"}, "tool_call_response": {"response"},
		"blob": {"modality", "content"}, "uri": {"modality", "uri"}, "file": {"modality", "file_id"},
	}
	for _, p := range parts {
		part, ok := p.(map[string]any)
		require.True(t, ok)
		typ, ok := part["type"].(string)
		require.True(t, ok, "part has a string type: %v", part)
		for _, f := range required[typ] {
			assert.Contains(t, part, f, "%s part has %s", typ, f)
		}
	}
}

func FuzzExchangeAttributes(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}`,
		`{"input":[{"type":"function_call","arguments":"{"}],"reasoning":{"effort":"low"}}`,
		`{"system":[{"type":"text"}],"messages":[{"content":[{"type":"tool_result"}]}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{}}]}}],"usage":{"prompt_tokens":1}}`,
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, reqText, respText string) {
		req, _ := RequestPayload([]byte(reqText))
		resp, _ := ResponsePayload([]byte(respText))
		for _, d := range []string{semconv.DialectChat, semconv.DialectResponses, semconv.DialectMessages} {
			e := Exchange{ModelCallID: "id", Dialect: d, LatencyMS: 1, Request: req, Response: resp}
			attrs := ExchangeAttributes(&e, WithMessageContent(true), WithConventions(semconv.GenAIConventionsLatestExperimental))
			for _, kv := range attrs {
				switch kv.Key {
				case semconv.GenAIInputMessagesKey, semconv.GenAIOutputMessagesKey, semconv.GenAISystemInstructionsKey:
					if !json.Valid([]byte(kv.Value.AsString())) {
						t.Fatalf("%s is not JSON: %s", kv.Key, kv.Value.AsString())
					}
				}
			}
			// The content options never change the rebuilt record.
			got, problems, err := ExchangeFromAttributes(newAttrMap(attrs), testStartTime, testStartTime)
			if err != nil || len(problems) > 0 {
				t.Fatalf("rebuild: %v %v", err, problems)
			}
			if string(got.Request) != string(req) || string(got.Response) != string(resp) {
				t.Fatalf("payloads changed")
			}
		}
	})
}

var testStartTime = time.Unix(1786032154, 0)

func BenchmarkExchangeAttributesMessageContent(b *testing.B) {
	status := 200
	e := Exchange{
		ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: "chat", LatencyMS: 12.5, StatusCode: &status,
		Request:  []byte(`{"model":"policy","stream":true,"temperature":0.5,"messages":[` + strings.Repeat(`{"role":"user","content":"hello"},`, 100) + `{"role":"user","content":"x"}]}`),
		Response: []byte(`{"id":"c","model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`),
	}
	opts := []AttributeOption{WithMessageContent(true)}
	b.ReportAllocs()
	for b.Loop() {
		_ = ExchangeAttributes(&e, opts...)
	}
}
