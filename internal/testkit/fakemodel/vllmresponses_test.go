package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// responsesBody is a one-input Responses request with the extra members given as JSON text.
func responsesBody(input, extra string) string {
	b := `{"model":"Qwen/Qwen3-4B","input":` + input
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

const responsesTokenMembers = `"include":["message.output_text.logprobs"],"enable_response_messages":true`

// vLLM's Responses answer: every member of ResponsesResponse, the token members null unless
// asked (vllmresponses.go).
func TestVLLMResponsesShapes(t *testing.T) {
	const (
		head  = `{id:s,created_at:n,incomplete_details:null,instructions:null,metadata:null,model:s,object:s,output:[{id:s,content:[{annotations:[],text:s,type:s,logprobs:`
		mid   = `}],role:s,status:s,type:s}],parallel_tool_calls:b,temperature:n,tool_choice:s,tools:[],top_p:n,background:b,max_output_tokens:n,max_tool_calls:null,previous_response_id:null,prompt:null,reasoning:null,service_tier:s,status:s,text:null,top_logprobs:`
		usage = `usage:{input_tokens:n,input_tokens_details:{cached_tokens:n,input_tokens_per_turn:[],cached_tokens_per_turn:[]},output_tokens:n,output_tokens_details:{reasoning_tokens:n,tool_output_tokens:n,output_tokens_per_turn:[],tool_output_tokens_per_turn:[]},total_tokens:n}`
		tail  = `,truncation:s,` + usage + `,user:null,input_messages:`
		raw   = `[{message:s,tokens:[n],type:s}]`
	)
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	for _, tc := range []struct{ name, extra, want string }{
		{"nothing asked", ``, head + `null` + mid + `null` + tail + `null,output_messages:null}`},
		{"log probs", `"include":["message.output_text.logprobs"]`,
			head + `[{token:s,bytes:[n],logprob:n,top_logprobs:[]}]` + mid + `n` + tail + `null,output_messages:null}`},
		{"messages", `"enable_response_messages":true`, head + `null` + mid + `null` + tail + raw + `,output_messages:` + raw + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, "/v1/responses", responsesBody(`"hi"`, tc.extra))
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, tc.want, shape(t, body))
		})
	}
}

// vllmResponse is a vLLM Responses answer read back.
type vllmResponse struct {
	obj      map[string]any
	prompt   []int64 // input_messages[0].tokens
	gen      []int64 // output_messages[0].tokens
	logprobs int     // entries on output_text
	text     string
}

func readVLLMResponse(t *testing.T, o map[string]any) vllmResponse {
	t.Helper()
	r := vllmResponse{obj: o}
	if in, ok := o["input_messages"].([]any); ok {
		r.prompt = ints(t, in, 0, "tokens")
		r.gen = ints(t, o, "output_messages", 0, "tokens")
	}
	for _, it := range o["output"].([]any) {
		it := it.(map[string]any)
		if it["type"] != "message" {
			continue
		}
		for _, p := range it["content"].([]any) {
			p := p.(map[string]any)
			r.text += p["text"].(string)
			if lp, ok := p["logprobs"].([]any); ok {
				r.logprobs += len(lp)
			}
		}
	}
	return r
}

// The token members change what the answer reports, never what it is: the same ids, text and
// output with and without them; the ids agree with the usage and the log probs cover every
// generated token.
func TestVLLMResponsesTokens(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	_, plain := post(t, srv, "/v1/responses", responsesBody(`"hi"`, ``))
	_, asked := post(t, srv, "/v1/responses", responsesBody(`"hi"`, responsesTokenMembers))
	p, a := object(t, plain), object(t, asked)
	require.Equal(t, p["id"], a["id"])
	rp, ra := readVLLMResponse(t, p), readVLLMResponse(t, a)
	require.Equal(t, rp.text, ra.text)
	require.NotEmpty(t, ra.prompt)
	require.Len(t, ra.gen, int(num(t, a, "usage", "output_tokens")))
	require.Len(t, ra.prompt, int(num(t, a, "usage", "input_tokens")))
	require.Equal(t, len(ra.gen), ra.logprobs, "log probs of every generated token on the message")
	require.Zero(t, rp.logprobs)

	// The prompt is the chat template's rendering of the input: /tokenize of the same chat.
	_, tok := post(t, srv, "/tokenize", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, ints(t, object(t, tok), "tokens"), ra.prompt)
}

// A follow-up turn that sends the answer's items back has a prompt that extends the previous
// prompt and generation token by token.
func TestVLLMResponsesMultiTurnPrefix(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	input := []any{map[string]any{"role": "user", "content": "hi"}}
	body := func() string {
		b, err := json.Marshal(input)
		require.NoError(t, err)
		return responsesBody(string(b), responsesTokenMembers)
	}
	_, first := post(t, srv, "/v1/responses", body())
	r1 := readVLLMResponse(t, object(t, first))
	input = append(input, object(t, first)["output"].([]any)...)
	input = append(input, map[string]any{"role": "user", "content": "and then?"})
	_, second := post(t, srv, "/v1/responses", body())
	r2 := readVLLMResponse(t, object(t, second))
	prefix := append(append([]int64{}, r1.prompt...), r1.gen...)
	require.Greater(t, len(r2.prompt), len(prefix))
	require.Equal(t, prefix, r2.prompt[:len(prefix)])
}

// A turn that only calls a tool has no message item, so its log probs appear nowhere (vLLM
// puts them on the message's output_text).
func TestVLLMResponsesToolCallHasNoLogprobs(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	_, body := post(t, srv, "/v1/responses", responsesBody(`"weather in Paris"`, tools+","+responsesTokenMembers))
	o := object(t, body)
	r := readVLLMResponse(t, o)
	var types []string
	for _, it := range o["output"].([]any) {
		types = append(types, it.(map[string]any)["type"].(string))
	}
	require.Contains(t, types, "function_call")
	require.NotContains(t, types, "message")
	require.NotEmpty(t, r.gen)
	require.Zero(t, r.logprobs)
}

// A stream: the snapshot events without the token members, output_text deltas with their
// tokens' log probs, and response.completed equal to the JSON answer.
func TestVLLMResponsesStream(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	for _, extra := range []string{``, responsesTokenMembers} {
		_, whole := post(t, srv, "/v1/responses", responsesBody(`"hi"`, extra))
		_, streamed := post(t, srv, "/v1/responses", responsesBody(`"hi"`, extra+map[bool]string{true: ",", false: ""}[extra != ""]+`"stream":true`))
		events := parseSSE(t, streamed)
		require.Equal(t, "response.created", events[0].Name)
		var deltas strings.Builder
		entries := 0
		for i, ev := range events {
			o := object(t, ev.Data)
			require.Equal(t, ev.Name, o["type"])
			require.EqualValues(t, i, num(t, o, "sequence_number"))
			if ev.Name == "response.output_text.delta" {
				deltas.WriteString(o["delta"].(string))
				entries += len(o["logprobs"].([]any))
			}
			if ev.Name == "response.created" {
				require.Nil(t, at(t, o, "response", "input_messages"))
			}
		}
		last := object(t, events[len(events)-1].Data)
		require.Equal(t, "response.completed", last["type"])
		require.Equal(t, object(t, whole), last["response"].(map[string]any))
		r := readVLLMResponse(t, object(t, whole))
		require.Equal(t, r.text, deltas.String())
		if extra == "" {
			require.Zero(t, entries)
		} else {
			require.Positive(t, entries)
		}
	}
}
