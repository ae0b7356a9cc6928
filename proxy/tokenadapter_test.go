package proxy

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/tokens"
)

// memSink keeps what a tokens.Call writes.
type memSink struct {
	entries []tokens.TokenEntry
	marks   []string
}

func (m *memSink) Append(e tokens.TokenEntry) error { m.entries = append(m.entries, e); return nil }
func (m *memSink) MarkIncomplete(_, id string) error {
	m.marks = append(m.marks, id)
	return nil
}

// TestVLLMAdapterVectors runs the VL vectors (token_capture.json, Gym's vLLM adapter) through the
// proxy's adapter: the members it adds, the /tokenize request, the extraction errors and the token
// line. Where gymtrace's rules differ (T2: it never overrides the client's settings, and it does
// not fold reasoning into the content), the case checks gymtrace's result instead.
func TestVLLMAdapterVectors(t *testing.T) {
	pinned := time.Unix(1786032154, 250_000_000)
	n := 0
	for _, c := range testvectors.Load(t, "token_capture.json") {
		if !strings.HasPrefix(c.Name, "VL-") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			in, err := ojson.Parse(c.Input)
			require.NoError(t, err)
			exp, err := ojson.Parse(c.Expected)
			require.NoError(t, err)
			cfg, _ := in.Get("config")
			flag := func(k string) bool { v, _ := cfg.Get(k); b, _ := v.AsBool(); return b }
			reqBody, _ := in.Get("request_body")
			src := TokenSourceVLLM
			if !flag("return_token_id_information") {
				src = TokenSourceNone
			}
			fromLogprobs := !flag("request_prompt_and_generation_token_ids")
			upReq, _ := exp.Get("upstream_request")
			if upReq.IsNull() { // refused before forwarding: n != 1 (T3)
				tc := &tokenCapture{source: src, logger: discardLogger()}
				rec := httptest.NewRecorder()
				_, refused := tc.begin(rec, "/v1/chat/completions", reqBody.AppendJSON(nil), "r0", "c1", "chat")
				require.True(t, refused)
				assert.Equal(t, 400, rec.Code)
				assert.Contains(t, rec.Body.String(), "n=1")
				return
			}
			ad := newAdapterCall(src, fromLogprobs, "chat", reqBody)
			if src == TokenSourceNone {
				assert.Nil(t, ad, "nothing injected")
				return
			}
			if lp, ok := reqBody.Get("logprobs"); ok && !lp.IsNull() {
				// The reference overrides the client's logprobs:false; gymtrace never does (T2).
				require.NotEmpty(t, ad.refuse)
				return
			}
			require.True(t, ad.active())
			sent, err := ojson.Parse(ad.requestBody(reqBody.AppendJSON(nil)))
			require.NoError(t, err)
			for _, m := range ad.inject {
				want, ok := upReq.Get(m.Key)
				require.True(t, ok, "the reference also sends %s", m.Key)
				assert.True(t, want.Equal(m.Value), "%s", m.Key)
				got, _ := sent.Get(m.Key)
				assert.True(t, got.Equal(m.Value))
			}
			resp, _ := in.Get("vllm_response")
			if resp.Kind() == ojson.KindString { // the upstream answered 400 (context length)
				sink := &memSink{}
				call := &tokenCall{tc: &tokenCapture{source: src, logger: discardLogger()}, ad: ad, call: tokens.Call{RolloutID: "r0", ModelCallID: "c1", Sink: sink}}
				call.commit(nil, callEnd{status: 400, complete: true}, pinned, nil, nil)
				assert.Equal(t, []string{"c1"}, sink.marks)
				return
			}
			ids, err := ad.extract(resp)
			if e, ok := exp.Get("error"); ok {
				msg, _ := e.Get("message")
				want, _ := msg.AsString()
				require.Error(t, err)
				if strings.Contains(want, "requested per-token logprobs") {
					assert.Contains(t, err.Error(), "but the response had none")
				} else {
					assert.Equal(t, want, err.Error())
				}
				return
			}
			require.NoError(t, err)
			// The /tokenize fallback, with the reference's request built from the body as sent
			// (the reference sends its configured model; use the vector's sent request).
			wantTok, _ := exp.Get("tokenize_request")
			if !ids.HasPrompt {
				require.False(t, wantTok.IsNull())
				got, err := tokenizeBody(upReq.AppendJSON(nil))
				require.NoError(t, err)
				assert.Equal(t, string(wantTok.AppendJSON(nil)), string(got))
				tr, _ := in.Get("tokenize_response")
				toks, _ := tr.Get("tokens")
				ids.Prompt, err = tokenIDs(toks)
				require.NoError(t, err)
			} else {
				assert.True(t, wantTok.IsNull())
			}
			sink := &memSink{}
			call := tokens.Call{RolloutID: "r0", ModelCallID: "c1", Sink: sink}
			out := call.CaptureTokens(servedPayload(resp, &ids), pinned)
			require.True(t, out.Written, "%+v", out)
			line, err := sink.entries[0].CanonicalJSON()
			require.NoError(t, err)
			// The proxy's own path (captureServed: the payload without its lists, the ids beside
			// it) writes the same line.
			slim := &memSink{}
			slimCall := tokens.Call{RolloutID: "r0", ModelCallID: "c1", Sink: slim}
			served := servedAnswer{body: servedPayload(resp, nil), ids: &ids, whole: func() []byte { panic("the slim path declined") }}
			require.True(t, captureServed(&slimCall, served, pinned).Written)
			slimLine, err := slim.entries[0].CanonicalJSON()
			require.NoError(t, err)
			assert.Equal(t, string(line), string(slimLine))
			wantLine, _ := exp.Get("token_line")
			ws, _ := wantLine.AsString()
			if flag("uses_reasoning_parser") {
				// The reference folds reasoning into <think> content; gymtrace keeps the message as
				// vLLM sent it, so only the token arrays are compared.
				we, err := tokens.ParseEntry([]byte(ws))
				require.NoError(t, err)
				assert.Equal(t, we.PromptTokenIDs, sink.entries[0].PromptTokenIDs)
				assert.Equal(t, we.GenerationTokenIDs, sink.entries[0].GenerationTokenIDs)
				assert.Equal(t, we.GenerationLogProbs, sink.entries[0].GenerationLogProbs)
				return
			}
			assert.Equal(t, ws, string(line)+"\n")
		})
	}
	assert.Equal(t, 17, n)
}

func tokenIDs(v ojson.Value) ([]int64, error) {
	var out []int64
	for _, e := range v.Elems() {
		n, _ := e.Int64()
		out = append(out, n)
	}
	return out, nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// tokenizeBody is the /tokenize request tokenize sends for sentBody (for tests).
func tokenizeBody(sentBody []byte) ([]byte, error) {
	var got []byte
	_, err := tokenize(sentBody, func(_ string, body []byte) (int, []byte, error) {
		got = body
		return 200, []byte(`{"tokens":[]}`), nil
	})
	return got, err
}
