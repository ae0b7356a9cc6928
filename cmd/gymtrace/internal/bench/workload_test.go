package bench

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

func TestWorkloads(t *testing.T) {
	ws := Workloads()
	names := append(slices.Clone(WorkloadNames), ExtraWorkloadNames...)
	require.Len(t, ws, len(names))
	for i, w := range ws {
		assert.Equal(t, names[i], w.Name, "run order")
		assert.True(t, json.Valid(w.Request), "%s request is JSON", w.Name)
		assert.NotEmpty(t, w.Description)
		obj, raw := capture.RequestPayload(w.Request)
		assert.NotNil(t, obj, "%s request is stored as an object", w.Name)
		assert.Nil(t, raw)
	}
	t.Run("small", func(t *testing.T) {
		w := ws[0]
		assert.False(t, w.Stream())
		assert.True(t, json.Valid(w.Response))
		assert.Less(t, len(w.Response), 1024)
		assert.Equal(t, len(w.Response), w.ResponseBytes())
	})
	t.Run("json20k", func(t *testing.T) {
		w := ws[1]
		assert.False(t, w.Stream())
		assert.True(t, json.Valid(w.Response))
		assert.Len(t, w.Response, 20<<10, "exactly 20 KiB")
		var v struct {
			Choices []struct {
				Message struct{ Content string }
			}
		}
		require.NoError(t, json.Unmarshal(w.Response, &v))
		require.Len(t, v.Choices, 1)
		assert.Contains(t, v.Choices[0].Message.Content, "\n", "the text carries escapes")
	})
	t.Run("sse1m", func(t *testing.T) {
		w := ws[3]
		assert.True(t, w.Stream())
		assert.Zero(t, w.Gap, "events back to back")
		assert.LessOrEqual(t, w.ResponseBytes(), sse1MBytes)
		assert.Greater(t, w.ResponseBytes(), sse1MBytes-len(w.Events[1]), "1 MiB to within one event")
		var body bytes.Buffer
		for _, ev := range w.Events {
			body.Write(ev)
		}
		resp, ok := stream.Reassemble(stream.DialectChat, body.Bytes())
		require.True(t, ok, "the stream reassembles")
		var v struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct{ Content string }
			}
		}
		require.NoError(t, json.Unmarshal(resp, &v))
		require.Len(t, v.Choices, 1)
		assert.Equal(t, "stop", v.Choices[0].FinishReason)
		assert.Len(t, v.Choices[0].Message.Content, (len(w.Events)-4)*sse1MText, "every delta's text")
	})
	t.Run("sse200", func(t *testing.T) {
		w := ws[2]
		assert.True(t, w.Stream())
		require.Len(t, w.Events, 200)
		assert.Equal(t, sseGap, w.Gap)
		var body bytes.Buffer
		for i, ev := range w.Events {
			s := string(ev)
			require.True(t, strings.HasPrefix(s, "data: ") && strings.HasSuffix(s, "\n\n"), "event %d framed", i)
			data := strings.TrimSuffix(strings.TrimPrefix(s, "data: "), "\n\n")
			if i < len(w.Events)-1 {
				assert.True(t, json.Valid([]byte(data)), "event %d is JSON", i)
			} else {
				assert.Equal(t, "[DONE]", data)
			}
			body.Write(ev)
		}
		assert.Equal(t, body.Len(), w.ResponseBytes())
		resp, ok := stream.Reassemble(stream.DialectChat, body.Bytes())
		require.True(t, ok, "the stream reassembles")
		var v struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct{ Content string }
			}
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		require.NoError(t, json.Unmarshal(resp, &v))
		require.Len(t, v.Choices, 1)
		assert.Equal(t, "stop", v.Choices[0].FinishReason)
		assert.Equal(t, 196, v.Usage.CompletionTokens)
		assert.Equal(t, 196, strings.Count(v.Choices[0].Message.Content, " "), "every delta reassembled")
	})
	for _, w := range ws[4:] {
		t.Run(w.Name, func(t *testing.T) {
			assert.Equal(t, "vllm", w.TokenSource)
			assert.NotNil(t, w.handler, "the fake vLLM engine answers")
			body := w.Response
			if w.Stream() {
				require.Len(t, w.Events, 200, "200 events, [DONE] included")
				assert.Equal(t, "data: [DONE]\n\n", string(w.Events[len(w.Events)-1]))
				body = bytes.Join(w.Events, nil)
				resp, ok := stream.Reassemble(stream.DialectChat, body)
				require.True(t, ok, "the stream reassembles")
				assert.Contains(t, string(resp), `"finish_reason":"stop"`)
			} else {
				assert.True(t, json.Valid(body))
			}
			assert.Equal(t, len(body), w.ResponseBytes())
			// vLLM's answer to the client's own request: the token members unset, written as null.
			assert.Contains(t, string(body), `"prompt_token_ids":null`)
			assert.Contains(t, string(body), `"token_ids":null`)
			assert.NotContains(t, string(body), `"token_ids":[`)

			// What the capture proxy asks for (docs/TOKENS.md §1.5) the fake answers with ids.
			var req map[string]any
			require.NoError(t, json.Unmarshal(w.Request, &req))
			req["logprobs"], req["top_logprobs"], req["return_token_ids"] = true, 0, true
			asked, err := json.Marshal(req)
			require.NoError(t, err)
			withIDs, _ := tokenAnswer(asked, false)
			assert.Contains(t, string(withIDs), `"token_ids":[`)
		})
	}
	t.Run("fresh copies", func(t *testing.T) {
		a, b := Workloads(), Workloads()
		a[0].Request[0] = 'X'
		assert.Equal(t, byte('{'), b[0].Request[0])
	})
}

func TestLookupWorkloads(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{name: "all", in: []string{"all"}, want: WorkloadNames},
		{name: "one", in: []string{"sse200"}, want: []string{"sse200"}},
		{name: "run order kept", in: []string{"sse200", "small"}, want: []string{"small", "sse200"}},
		{name: "duplicates", in: []string{"small", "all", "small"}, want: WorkloadNames},
		{name: "spaces", in: []string{" json20k "}, want: []string{"json20k"}},
		{name: "unknown", in: []string{"small", "huge"}, wantErr: `unknown workload "huge" (want small, json20k, sse200, sse1m, tokens-small, tokens-sse200, tokens or all)`},
		{name: "token workloads by their group", in: []string{"tokens"}, want: TokenWorkloadNames},
		{name: "token workload by name", in: []string{"tokens-sse200", "small"}, want: []string{"small", "tokens-sse200"}},
		{name: "extra workload only by name", in: []string{"sse1m"}, want: []string{WorkloadSSE1M}},
		{name: "empty name", in: []string{""}, wantErr: "empty workload name in the list"},
		{name: "none", in: nil, wantErr: "no workload named"},
		{name: "empty name (trailing comma)", in: []string{"small", ""}, wantErr: "empty workload name in the list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LookupWorkloads(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, w := range got {
				names = append(names, w.Name)
			}
			assert.Equal(t, tc.want, names)
		})
	}
}
