package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// fakeVLLM answers like vLLM's OpenAI server for the members token capture touches (vLLM's
// chat_completion/serving.py: a non-streamed answer is model_dump(), unset optional members null;
// stream chunks are dumped with exclude_unset, and the members it passes explicitly, logprobs,
// token_ids and the first chunk's prompt_token_ids, are null when not asked; a token its parser
// holds back gives an empty-delta chunk only when return_token_ids is asked).
// inline false plays a vLLM before 0.10.2 (return_token_ids ignored). sglang plays SGLang's shapes
// (ids on the choice, omitted when not asked).
type fakeVLLM struct {
	inline, sglang bool
	requests       []map[string]any // the chat requests received
	bodies         []string         // their bodies, as received
	tokenizes      []string         // the /tokenize bodies received
}

var (
	fakePrompt = []int{101, 7, 8, 9}
	fakeGen    = []int{31, 32, 33}
	fakeText   = []string{"hi", " the", "re"}
	fakeLP     = []float64{-0.5, -0.25, -0.125}
)

func (f *fakeVLLM) handler(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path == "/tokenize" {
		f.tokenizes = append(f.tokenizes, string(body))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"count":%d,"max_model_len":4096,"tokens":%s}`, len(fakePrompt), ints(fakePrompt))
		return
	}
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	f.requests = append(f.requests, req)
	f.bodies = append(f.bodies, string(body))
	if msgs, _ := req["messages"].([]any); len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); m["content"] == "LONG" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`)
			return
		}
	}
	// vLLM returns log probs only when "request.logprobs and request.top_logprobs is not None"
	// (top_logprobs defaults to 0); SGLang reads a null top_logprobs as 0.
	topLogprobs, hasTopLogprobs := req["top_logprobs"]
	logprobs := req["logprobs"] == true && (f.sglang || !hasTopLogprobs || topLogprobs != nil)
	asIDs := req["return_tokens_as_token_ids"] == true
	ids := req["return_token_ids"] == true && (f.inline || f.sglang)
	promptIDs := ids && (!f.sglang || req["return_prompt_token_ids"] == true)
	lpEntry := func(i int) string {
		tok := fakeText[i]
		if asIDs && !f.sglang {
			tok = fmt.Sprintf("token_id:%d", fakeGen[i])
		}
		return fmt.Sprintf(`{"token":%q,"logprob":%v,"bytes":null,"top_logprobs":[]}`, tok, fakeLP[i])
	}
	if req["stream"] == true {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		pIDs := "null"
		if promptIDs {
			pIDs = ints(fakePrompt)
		}
		io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":`+pIDs+"}\n\n")
		if ids && !f.sglang {
			// A held-back control token, streamed only with return_token_ids (its ids and log
			// prob are not counted by this fake).
			io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null,"token_ids":[]}]}`+"\n\n")
		}
		for i := range fakeGen {
			lp := "null"
			if logprobs {
				lp = `{"content":[` + lpEntry(i) + `]}`
			}
			ch := fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"logprobs":%s,"finish_reason":null`, fakeText[i], lp)
			if ids {
				ch += fmt.Sprintf(`,"token_ids":[%d]`, fakeGen[i])
			} else {
				ch += `,"token_ids":null`
			}
			io.WriteString(w, ch+"}]}\n\n")
			w.(http.Flusher).Flush()
		}
		tok := "null"
		if ids {
			tok = "[]"
		}
		io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop","stop_reason":null,"token_ids":`+tok+"}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
		return
	}
	lp := "null"
	if logprobs {
		var es []string
		for i := range fakeGen {
			es = append(es, lpEntry(i))
		}
		lp = `{"content":[` + strings.Join(es, ",") + `]}`
	}
	var out string
	if f.sglang {
		choice := `{"index":0,"message":{"role":"assistant","content":"hi there","tool_calls":null},"logprobs":` + lp + `,"finish_reason":"stop"`
		if ids {
			choice += `,"token_ids":` + ints(fakeGen)
		}
		if promptIDs {
			choice += `,"prompt_token_ids":` + ints(fakePrompt)
		}
		out = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[` + choice + `}],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}`
	} else {
		tokIDs, pIDs := "null", "null"
		if ids {
			tokIDs, pIDs = ints(fakeGen), ints(fakePrompt)
		}
		out = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi there","refusal":null,"tool_calls":[]},"logprobs":` + lp + `,"finish_reason":"stop","stop_reason":null,"token_ids":` + tokIDs + `}],"service_tier":null,"usage":{"prompt_tokens":4,"total_tokens":7,"completion_tokens":3},"prompt_logprobs":null,"prompt_token_ids":` + pIDs + `,"kv_transfer_params":null}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	io.WriteString(w, out)
}

func ints(xs []int) string {
	b, _ := json.Marshal(xs)
	return string(b)
}

// direct sends body to the upstream itself and returns its answer bytes.
func direct(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

func tokenEnv(t *testing.T, f *fakeVLLM, src TokenSource, opts ...Option) (*testEnv, string, *tokens.Store) {
	t.Helper()
	up := newUpstream(t, f.handler)
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, append([]Option{WithTokenSource(src), WithTokenDir(dir)}, opts...)...)
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	return env, up.URL, st
}

const tokenPath = "/ng-rollout/r1/training-token-capture/v1/chat/completions"

// TestTokenCaptureVLLM: through the proxy, the client's bytes equal what the same upstream sends
// for the client's own request, and the entry holds the upstream's ids (TOKENS.md §0 T2, T3).
func TestTokenCaptureVLLM(t *testing.T) {
	cases := []struct {
		name         string
		body         string
		inline       bool
		fromLogprobs bool
		tokenize     bool
	}{
		{"json inline", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, true, false, false},
		{"json inline client logprobs", `{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":0}`, true, false, false},
		{"json logprobs only", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, false, true, true},
		{"sse inline", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, true, false, false},
		{"sse logprobs only", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, false, true, true},
		{"empty object spacing", `{ "messages" : [ {"role":"user","content":"hi"} ] , "model" : "m" }`, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeVLLM{inline: c.inline}
			env, up, st := tokenEnv(t, f, TokenSourceVLLM, WithVLLMTokenIDsFromLogprobs(c.fromLogprobs))
			want := direct(t, up, c.body)
			resp, got, err := env.post(t, tokenPath, c.body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, string(want), string(got), "the client gets the upstream's answer to its own request")
			if !strings.Contains(c.body, `"stream":true`) {
				assert.Equal(t, fmt.Sprint(len(want)), resp.Header.Get("Content-Length"))
			}
			sent := f.requests[len(f.requests)-1]
			assert.Equal(t, true, sent["logprobs"])
			assert.EqualValues(t, 0, sent["top_logprobs"])
			if c.fromLogprobs {
				assert.Equal(t, true, sent["return_tokens_as_token_ids"])
				assert.NotContains(t, sent, "return_token_ids")
			} else {
				assert.Equal(t, true, sent["return_token_ids"])
				assert.NotContains(t, sent, "return_tokens_as_token_ids")
			}
			if c.tokenize {
				require.Len(t, f.tokenizes, 1)
				assert.Equal(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, f.tokenizes[0])
			} else {
				assert.Empty(t, f.tokenizes)
			}
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			require.Len(t, es, 1)
			e := es[0]
			assert.Equal(t, []int64{101, 7, 8, 9}, e.PromptTokenIDs)
			assert.Equal(t, []int64{31, 32, 33}, e.GenerationTokenIDs)
			assert.Equal(t, []float64{-0.5, -0.25, -0.125}, e.GenerationLogProbs)
			assert.Equal(t, "m", e.Model)
			rec := env.record(t, "r1")
			assert.Equal(t, rec["model_call_id"], e.ModelCallID, "one model_call_id (T4)")
			line, err := e.CanonicalJSON()
			require.NoError(t, err)
			raw, err := os.ReadFile(filepath.Join(st.Dir(), "r1"+tokens.EntriesFileSuffix))
			require.NoError(t, err)
			assert.Equal(t, string(line)+"\n", string(raw), "the line is canonical")
			a := env.spanAttrs(t)
			assert.True(t, a[semconv.GymtraceTokensEntryWrittenKey].AsBool())
			assert.EqualValues(t, 4, a[semconv.GymtraceTokensPromptCountKey].AsInt64())
			assert.EqualValues(t, 3, a[semconv.GymtraceTokensGenerationCountKey].AsInt64())
			snap, err := st.Freeze("r1")
			require.NoError(t, err)
			assert.False(t, snap.Incomplete)
		})
	}
}

func TestTokenCaptureSGLang(t *testing.T) {
	f := &fakeVLLM{sglang: true}
	env, up, st := tokenEnv(t, f, TokenSourceSGLang)
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	want := direct(t, up, body)
	_, got, err := env.post(t, tokenPath, body, nil)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	sent := f.requests[len(f.requests)-1]
	assert.Equal(t, true, sent["return_prompt_token_ids"])
	es, err := st.ReadEntries("r1")
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, []int64{101, 7, 8, 9}, es[0].PromptTokenIDs)
	assert.Equal(t, []int64{31, 32, 33}, es[0].GenerationTokenIDs)
}

// TestTokenCaptureIncomplete: calls that cannot give an entry mark the rollout incomplete with
// their call id, and are forwarded unchanged (TOKENS.md §3.3, §7, T2).
func TestTokenCaptureIncomplete(t *testing.T) {
	cases := []struct {
		name, body string
		src        TokenSource
		cause      string
	}{
		{"none", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, TokenSourceNone, semconv.TokensCauseNoSource},
		{"context length 400", `{"model":"m","messages":[{"role":"user","content":"LONG"}]}`, TokenSourceVLLM, semconv.TokensCauseUpstream},
		{"gym without ids", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, TokenSourceGym, semconv.TokensCauseNoTokenIDs},
		{"client logprobs false", `{"model":"m","logprobs":false,"messages":[{"role":"user","content":"hi"}]}`, TokenSourceVLLM, semconv.TokensCauseAdapter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeVLLM{inline: true}
			env, up, st := tokenEnv(t, f, c.src)
			want := direct(t, up, c.body)
			_, got, err := env.post(t, tokenPath, c.body, nil)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			rec := env.record(t, "r1")
			marker, err := os.ReadFile(filepath.Join(st.Dir(), "r1"+tokens.IncompleteFileSuffix))
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprint(rec["model_call_id"])+"\n", string(marker))
			inc, err := st.IsIncomplete("r1")
			require.NoError(t, err)
			assert.True(t, inc)
			a := env.spanAttrs(t)
			assert.False(t, a[semconv.GymtraceTokensEntryWrittenKey].AsBool())
			assert.Equal(t, c.cause, a[semconv.GymtraceTokensIncompleteCauseKey].AsString())
		})
	}
}

// TestTokenCaptureGym reads the bundle a Gym model server returns, injecting nothing.
func TestTokenCaptureGym(t *testing.T) {
	answer := `{"id":"r","object":"response","model":"gm","output":[{"type":"message","role":"assistant","content":[],"prompt_token_ids":[1,2],"generation_token_ids":[3],"generation_log_probs":[-1.5]}]}`
	var got []byte
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceGym), WithTokenDir(dir))
	body := `{"model":"gm","input":"hi"}`
	_, b, err := env.post(t, "/ng-rollout/r1/training-token-capture/v1/responses", body, nil)
	require.NoError(t, err)
	assert.Equal(t, answer, string(b))
	assert.Equal(t, body, string(got), "nothing injected")
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	es, err := st.ReadEntries("r1")
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, []int64{1, 2}, es[0].PromptTokenIDs)
}

// TestTokenCaptureRefusals: n other than 1 → 400, a finalized rollout → 409, neither forwarded.
func TestTokenCaptureRefusals(t *testing.T) {
	f := &fakeVLLM{inline: true}
	env, _, st := tokenEnv(t, f, TokenSourceVLLM)
	resp, b, err := env.post(t, tokenPath, `{"model":"m","n":2,"messages":[]}`, nil)
	require.NoError(t, err)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Contains(t, string(b), `"type":"invalid_request_error"`)
	assert.Contains(t, string(b), "n=1")

	_, err = st.Freeze("r1")
	require.NoError(t, err)
	for _, body := range []string{`{"model":"m","messages":[]}`, `{"model":"m","stream":true,"messages":[]}`} {
		resp, b, err = env.post(t, tokenPath, body, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusConflict, resp.StatusCode)
		assert.Contains(t, string(b), `"code":"rollout_finalized"`)
		assert.Contains(t, string(b), `rollout \"r1\" is frozen`)
	}
	resp, b, err = env.post(t, "/ng-rollout/r1/training-token-capture/v1/messages", `{"model":"m","messages":[]}`, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.True(t, bytes.HasPrefix(b, []byte(`{"type":"error","error":{"type":"invalid_request_error"`)), "Anthropic's shape: %s", b)
	assert.Empty(t, f.requests, "nothing forwarded")
}

// TestTokenCaptureUnobservedPath: another path under the token prefix marks the rollout
// incomplete with call id "" before it is forwarded ([MW-06], [MW-07], [MW-08], [MW-13]).
func TestTokenCaptureUnobservedPath(t *testing.T) {
	for _, rest := range []string{"/v1/models", "/v1/completions", "/v1/responses/", "/training-token-capture/v1/responses"} {
		t.Run(rest, func(t *testing.T) {
			var seen string
			dir := t.TempDir()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				m, _ := os.ReadFile(filepath.Join(dir, "r1"+tokens.IncompleteFileSuffix))
				seen = r.URL.Path + "|" + string(m)
				io.WriteString(w, "{}")
			})
			env := newProxyEnv(t, up.URL, nil, WithTokenDir(dir))
			_, _, err := env.post(t, "/ng-rollout/r1/training-token-capture"+rest, `{}`, nil)
			require.NoError(t, err)
			assert.Equal(t, rest+"|\n", seen, "marked before forwarding")
			state, err := os.ReadFile(filepath.Join(dir, "r1"+tokens.StateFileSuffix))
			require.NoError(t, err)
			assert.Equal(t, `{"entry_digests":{},"frozen":false,"incomplete":true,"indexed_size":0,"retired":false,"snapshot_id":"","version":1}`+"\n", string(state))
		})
	}
	// The evaluation prefix alone, an unprefixed call and the segment with nothing after it never
	// touch the token store ([MW-04], [MW-05], [MW-12]); an id D12 refuses is answered 400 before
	// anything (gymtrace's SPEC §0 D12 where the reference marks nothing either, [MW-09]).
	dir := t.TempDir()
	var paths []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		io.WriteString(w, "{}")
	})
	env := newProxyEnv(t, up.URL, nil, WithTokenDir(dir))
	for _, p := range []string{"/ng-rollout/r1/v1/models", "/ng-rollout/r1/v1/responses", "/v1/responses", "/ng-rollout/r1/training-token-capture"} {
		_, _, err := env.post(t, p, `{"model":"m","input":"x"}`, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"/v1/models", "/v1/responses", "/v1/responses", "/training-token-capture"}, paths)
	resp, _, err := env.post(t, "/ng-rollout/a%20b/training-token-capture/v1/models", `{}`, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents)
}

// TestTokenCaptureBrokenAndBounded: a stream the upstream breaks, and a held answer that passes
// the capture bound, mark the rollout incomplete with the call's id and the cause; the marks
// counter counts by cause (T8).
func TestTokenCaptureBrokenAndBounded(t *testing.T) {
	mp, reader := newMetricReader(t)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if req["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"token_ids":[1]}],"prompt_token_ids":[2]}`+"\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"index":0,"message":{"content":"`+strings.Repeat("a", 200)+`"},"logprobs":null,"token_ids":null}],"prompt_token_ids":null}`)
	})
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir), WithMeterProvider(mp))
	bounded := newProxyEnv(t, up.URL, env.store, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir), WithMaxResponseBytes(100))
	_, _, err := env.post(t, tokenPath, `{"model":"m","stream":true,"messages":[]}`, nil)
	require.Error(t, err, "the client's response is aborted")
	resp, body, err := bounded.post(t, tokenPath, `{"model":"m","messages":[]}`, nil)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(body), strings.Repeat("a", 200), "forwarded whole once past the bound")
	recs, _ := env.records(t, "r1")
	require.Len(t, recs, 2)
	marker, err := os.ReadFile(filepath.Join(dir, "r1"+tokens.IncompleteFileSuffix))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{fmt.Sprint(recs[0]["model_call_id"]), fmt.Sprint(recs[1]["model_call_id"])}, strings.Fields(string(marker)))
	causes := map[string]bool{}
	for _, s := range append(env.spans.GetSpans(), bounded.spans.GetSpans()...) {
		for _, kv := range s.Attributes {
			if kv.Key == semconv.GymtraceTokensIncompleteCauseKey {
				causes[kv.Value.AsString()] = true
			}
		}
	}
	assert.Equal(t, map[string]bool{semconv.TokensCauseStream: true, semconv.TokensCauseBound: true}, causes)
	m := collect(t, reader)
	_, wrote := m[semconv.GymtraceTokensEntriesName]
	assert.False(t, wrote, "no entry written")
	marks, ok := m[semconv.GymtraceTokensIncompleteName]
	require.True(t, ok)
	pts := marks.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, pts, 1)
	cause, _ := pts[0].Attributes.Value(semconv.GymtraceTokensIncompleteCauseKey)
	assert.Equal(t, semconv.TokensCauseStream, cause.AsString())
	assert.EqualValues(t, 1, pts[0].Value)
}

// TestTokenCaptureGymResponsesStream reads the bundle from a Gym-synthesized Responses stream
// (TOKENS.md §1.6: the items of response.completed carry the arrays, [AS-01]).
func TestTokenCaptureGymResponsesStream(t *testing.T) {
	item := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}],"prompt_token_ids":[1,2],"generation_token_ids":[3,4],"generation_log_probs":[-1.5,-0.5]}`
	answer := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"object\":\"response\",\"model\":\"gm\",\"output\":[]}}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" + item + "}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"object\":\"response\",\"model\":\"gm\",\"status\":\"completed\",\"output\":[" + item + "]}}\n\n"
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	})
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceGym), WithTokenDir(dir))
	_, b, err := env.post(t, "/ng-rollout/r1/training-token-capture/v1/responses", `{"model":"gm","input":"hi","stream":true}`, nil)
	require.NoError(t, err)
	assert.Equal(t, answer, string(b))
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	es, err := st.ReadEntries("r1")
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, []int64{3, 4}, es[0].GenerationTokenIDs)
	assert.Equal(t, "gm", es[0].Model)
}

// TestTokenCaptureEntriesCounter counts written entries (T8).
func TestTokenCaptureEntriesCounter(t *testing.T) {
	mp, reader := newMetricReader(t)
	f := &fakeVLLM{inline: true}
	env, _, _ := tokenEnv(t, f, TokenSourceVLLM, WithMeterProvider(mp))
	for range 2 {
		_, _, err := env.post(t, tokenPath, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
		require.NoError(t, err)
	}
	m := collect(t, reader)
	pts := m[semconv.GymtraceTokensEntriesName].Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, pts, 1)
	assert.EqualValues(t, 2, pts[0].Value)
}

// TestTokenCaptureMultiTurnFinalizes: a three-turn vLLM rollout through the proxy (JSON, SSE,
// JSON) gives entries whose chain builds into one prefix-contiguous response.output, unmasked
// (TOKENS.md §3.4–3.7).
func TestTokenCaptureMultiTurnFinalizes(t *testing.T) {
	turns := []struct{ prompt, gen []int }{
		{[]int{1, 2}, []int{3, 4}},
		{[]int{1, 2, 3, 4, 5}, []int{6}},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8}, []int{9, 10}},
	}
	n := 0
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		tn := turns[n]
		n++
		lp := func(k int) string { return fmt.Sprintf(`{"content":[{"token":"t","logprob":-0.%d}]}`, k+1) }
		if req["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}],\"prompt_token_ids\":%s}\n\n", ints(tn.prompt))
			for k, g := range tn.gen {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":%s,\"finish_reason\":null,\"token_ids\":[%d]}]}\n\n", lp(k), g)
			}
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\",\"token_ids\":[]}]}\n\ndata: [DONE]\n\n")
			return
		}
		var es []string
		for k := range tn.gen {
			es = append(es, strings.TrimSuffix(strings.TrimPrefix(lp(k), `{"content":[`), `]}`))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"x"},"logprobs":{"content":[%s]},"finish_reason":"stop","token_ids":%s}],"prompt_token_ids":%s}`,
			strings.Join(es, ","), ints(tn.gen), ints(tn.prompt))
	})
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir))
	for _, stream := range []bool{false, true, false} {
		_, _, err := env.post(t, tokenPath, fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"hi"}]}`, stream), nil)
		require.NoError(t, err)
	}
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	line, err := ojson.Parse([]byte(`{"_ng_rollout_id":"r1","response":{"id":"r","output":[]}}`))
	require.NoError(t, err)
	built, warning := tokens.FinalizeRollout(&line, st)
	assert.Empty(t, warning)
	_, masked := line.Get(tokens.MaskSampleKey)
	assert.False(t, masked, "%s", line.AppendJSON(nil))
	resp, _ := line.Get("response")
	require.NoError(t, tokens.AssertPrefixContiguity(resp))
	out, _ := resp.Get("output")
	var gens []string
	for _, it := range out.Elems() {
		g, _ := it.Get("generation_token_ids")
		gens = append(gens, string(g.AppendJSON(nil)))
	}
	assert.Equal(t, []string{"[3,4]", "[6]", "[9,10]"}, gens)
	assert.True(t, tokens.CaptureBuildCanRetire(built))
}
