package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/rollout"
)

// The SK cases' payloads are the reference test's fixtures, which the vectors give only through
// their results (files_after holds every byte of the entry built from them).
const (
	skResponses = `{"id":"resp_1","model":"downstream-model","object":"response","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi","annotations":[]}],"prompt_token_ids":[1,2,3],"generation_token_ids":[4,5],"generation_log_probs":[-0.1,-0.2]}]}`
	skVLLM      = `{"id":"resp_0a1b","created_at":1786032154,"model":"Qwen/Qwen3-4B","object":"response","output":[{"id":"rs_01","summary":[{"text":"need the weather","type":"summary_text"}],"type":"reasoning","status":"completed","content":null,"encrypted_content":null},{"id":"msg_01","content":[{"annotations":[],"text":"Let me check.","type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"},{"arguments":"{\"city\": \"Paris\"}","call_id":"chatcmpl-tool-9","name":"get_weather","type":"function_call","id":"chatcmpl-tool-9","status":"completed","prompt_token_ids":[151644,872,198,3838],"generation_token_ids":[151667,1184,151668,10061,151657],"generation_log_probs":[-0.0012,-0.5,-3.2e-05,-1.25,0.0],"routed_experts":null}],"usage":{"input_tokens":4,"output_tokens":5,"total_tokens":9}}`
	skNoIDs     = `{"id":"resp_1","model":"downstream-model","object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}]}]}`
	skPartial   = `{"model":"m","output":[{"type":"message","generation_token_ids":[4,5],"generation_log_probs":[-0.1,-0.2]}]}`
	skMismatch  = `{"model":"m","output":[{"type":"message","prompt_token_ids":[1,2,3],"generation_token_ids":[4,5],"generation_log_probs":[-0.1]}]}`
	skChat      = `{"id":"chatcmpl-1","object":"chat.completion","model":"Qwen/Qwen3-4B","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi","tool_calls":null,"prompt_token_ids":[10,20,30],"generation_token_ids":[123,456],"generation_log_probs":[-0.1,-0.2]}}]}`
	skMoE       = `{"model":"moe","choices":[{"index":0,"message":{"role":"assistant","content":"x","prompt_token_ids":[10,20],"generation_token_ids":[123],"generation_log_probs":[-0.1],"routed_experts":[[[0,1]],[[2,3]],[[4,5]]]}}]}`
	skSecond    = `{"model":"downstream-model","output":[{"type":"function_call","name":"f","arguments":"{}","call_id":"x","prompt_token_ids":[1,2,3,4,5,6],"generation_token_ids":[7],"generation_log_probs":[-0.7]}]}`
)

// skSteps are the SK cases' calls (the reference test's steps): each gets the case's Call and
// returns what register_call_intent returned (nil, or its error).
var skSteps = map[string]func(t *testing.T, s *Store, c *Call) error{
	"SK-01": captureBody(skResponses),
	"SK-02": captureBody(skVLLM),
	"SK-03": captureBody(skNoIDs),
	"SK-04": captureBody(`[1, 2]`),
	"SK-05": captureBody(skPartial),
	"SK-06": captureBody(skMismatch),
	"SK-07": captureBody(skResponses),
	"SK-08": func(*testing.T, *Store, *Call) error { return nil }, // no capture context: no call at all
	"SK-09": func(t *testing.T, s *Store, c *Call) error {
		o := c.CommitEntry(baseEntry(c.RolloutID, c.ModelCallID))
		require.True(t, o.Written)
		o = c.CaptureTokens([]byte(skNoIDs), pinnedTime)
		assert.Equal(t, CauseNone, o.Cause, "a committed call is not a hole")
		return nil
	},
	"SK-10": func(t *testing.T, s *Store, c *Call) error {
		o := c.CommitEntry(baseEntry(c.RolloutID, "other"))
		assert.Equal(t, CauseIdentityMismatch, o.Cause)
		assert.True(t, o.Marked)
		return nil
	},
	"SK-11": func(t *testing.T, s *Store, c *Call) error {
		require.NoError(t, c.RegisterIntent())
		return captureBody(skResponses)(t, s, c)
	},
	"SK-12": func(t *testing.T, s *Store, c *Call) error { return c.RegisterIntent() },
	"SK-13": func(t *testing.T, s *Store, c *Call) error {
		_, err := s.Freeze(c.RolloutID)
		require.NoError(t, err)
		err = c.RegisterIntent()
		assert.ErrorIs(t, err, ErrFrozen)
		return err
	},
	"SK-14": func(t *testing.T, s *Store, c *Call) error { return c.RegisterIntent() },
	"SK-15": func(t *testing.T, s *Store, c *Call) error {
		_, err := s.Freeze(c.RolloutID)
		require.NoError(t, err)
		o := c.CaptureTokens([]byte(skResponses), pinnedTime)
		assert.Equal(t, CauseWrite, o.Cause)
		assert.ErrorIs(t, o.Err, ErrFrozen)
		assert.True(t, o.Marked)
		return nil
	},
	"SK-16": func(t *testing.T, s *Store, c *Call) error {
		o := c.CaptureTokens([]byte(skNoIDs), pinnedTime)
		assert.Equal(t, Outcome{}, o, "external staging: a missing capture is not this process's hole")
		return nil
	},
	"SK-17": func(t *testing.T, s *Store, c *Call) error {
		o := c.CommitEntry(baseEntry(c.RolloutID, c.ModelCallID))
		assert.False(t, o.Written)
		assert.Equal(t, CauseNone, o.Cause)
		return nil
	},
	"SK-18": captureBody(skChat),
	"SK-19": captureBody(skMoE),
	"SK-20": captureBody(skResponses),
	"SK-21": func(t *testing.T, s *Store, c *Call) error {
		require.NoError(t, captureBody(skResponses)(t, s, c))
		second := &Call{RolloutID: c.RolloutID, ModelCallID: "c2", Sink: c.Sink}
		require.NoError(t, captureBody(skSecond)(t, s, second))
		return nil
	},
}

// captureBody is one capture_tokens of body; it checks that the outcome agrees with the call's
// committed state and that the body is not modified.
func captureBody(body string) func(t *testing.T, s *Store, c *Call) error {
	return func(t *testing.T, s *Store, c *Call) error {
		b := []byte(body)
		o := c.CaptureTokens(b, pinnedTime)
		assert.Equal(t, body, string(b), "capture leaves the response as it is")
		assert.Equal(t, o.Written, o.Cause == CauseNone && c.Sink != nil, "%+v", o)
		assert.NoError(t, o.MarkErr)
		return nil
	}
}

type skContext struct {
	RolloutID   string  `json:"rollout_id"`
	ModelCallID string  `json:"model_call_id"`
	TokenSink   *string `json:"token_sink"`
	Model       string  `json:"model"`
}

// TestSinkVectors: capture_tokens, commit_entry and register_call_intent with the file store
// (TOKENS.md §3.1, group SK): each case's result, committed flag, files and the freeze afterwards.
func TestSinkVectors(t *testing.T) {
	cases := group(t, "SK")
	require.Len(t, cases, 21)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Context skContext `json:"context"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want struct {
				Result      json.RawMessage `json:"result"`
				Committed   bool            `json:"context_committed"`
				FilesAfter  json.RawMessage `json:"files_after"`
				FreezeAfter json.RawMessage `json:"freeze_after"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			s := vectorStore(t)
			call := &Call{RolloutID: in.Context.RolloutID, ModelCallID: in.Context.ModelCallID, Model: in.Context.Model}
			if in.Context.TokenSink != nil {
				call.Sink = s
			}
			step, ok := skSteps[c.Name]
			require.True(t, ok)
			assertStepResult(t, "result", want.Result, result(t, nil, step(t, s, call)))
			assert.Equal(t, want.Committed, call.Committed(), "committed")
			checkAfter(t, s, in.Context.RolloutID, want.FilesAfter, want.FreezeAfter)
		})
	}
}

// checkAfter compares the directory with files_after and a freeze with freeze_after (each when the
// vector has it).
func checkAfter(t *testing.T, s *Store, id string, filesAfter, freezeAfter json.RawMessage) {
	t.Helper()
	if filesAfter != nil {
		var wantFiles map[string]any
		require.NoError(t, json.Unmarshal(filesAfter, &wantFiles))
		assertFiles(t, s.Dir(), wantFiles)
	}
	if freezeAfter != nil {
		snap, err := s.Freeze(id)
		assertStepResult(t, "freeze_after", freezeAfter, result(t, func() any { return snapshotDump(t, snap) }, err))
	}
}

// TestDispatchVectors: the model server's intent → handler → capture (TOKENS.md §1.4, group DP),
// as the proxy will run it: the response reaches the client unchanged.
func TestDispatchVectors(t *testing.T) {
	cases := group(t, "DP")
	require.Len(t, cases, 3)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				HandlerReturns json.RawMessage `json:"handler_returns"`
				HandlerRaises  *string         `json:"handler_raises"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want struct {
				Result      json.RawMessage `json:"result"`
				FilesAfter  json.RawMessage `json:"files_after"`
				FreezeAfter json.RawMessage `json:"freeze_after"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			s := vectorStore(t)
			call := &Call{RolloutID: "r0", ModelCallID: "c1", Sink: s}

			dispatch := func() ([]byte, error) {
				if err := call.RegisterIntent(); err != nil {
					return nil, err
				}
				if in.HandlerRaises != nil { // RuntimeError('vLLM 500')
					msg := strings.TrimSuffix(strings.TrimPrefix(*in.HandlerRaises, "RuntimeError('"), "')")
					return nil, &Error{Type: "RuntimeError", Msg: msg}
				}
				body := bytes.Clone(in.HandlerReturns)
				call.CaptureTokens(body, pinnedTime)
				return body, nil
			}
			body, err := dispatch()
			if string(want.Result) == `"returned unchanged"` {
				require.NoError(t, err)
				assert.Equal(t, string(in.HandlerReturns), string(body))
			} else {
				assertStepResult(t, "result", want.Result, err)
			}
			checkAfter(t, s, "r0", want.FilesAfter, want.FreezeAfter)
		})
	}
}

// TestMiddlewareStoreVectors: the store side of the capture middleware (TOKENS.md §1.3, group
// MW): a path under the token prefix that is not one of the three observed endpoints marks its
// rollout incomplete with call id "" before forwarding (MW-06..08, MW-13), a mark that fails
// (invalid id, MW-09) is swallowed, and without a sink nothing is marked (MW-14); no other case
// writes a file. The prefix parsing itself is rollout's (rollout/prefix_test.go runs these paths);
// the context minting (MW-01..03, MW-10) and forwarding are the proxy's and are tested there.
func TestMiddlewareStoreVectors(t *testing.T) {
	observed := map[string]bool{"/v1/responses": true, "/v1/chat/completions": true, "/v1/messages": true}
	cases := group(t, "MW")
	require.Len(t, cases, 14)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Path       string  `json:"path"`
				TokenStore *string `json:"token_store"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want struct {
				FilesAfter json.RawMessage `json:"files_after"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			s := vectorStore(t)
			if p, ok := rollout.ParsePrefix(in.Path); ok && p.TokenCapture && !observed[p.Rest] && in.TokenStore != nil {
				err := s.MarkIncomplete(p.ID, "")
				if err != nil {
					assert.True(t, errors.Is(err, ErrInvalidRolloutID), "only an invalid id fails the mark: %v", err)
				}
			}
			var wantFiles map[string]any
			require.NoError(t, json.Unmarshal(want.FilesAfter, &wantFiles))
			assertFiles(t, s.Dir(), wantFiles)
		})
	}
}

// TestCallMarkIncomplete: the proxy's own causes (a stream cut short) mark the rollout with the
// call's id, committed or not; without a sink the mark cannot be made and says so.
func TestCallMarkIncomplete(t *testing.T) {
	s := vectorStore(t)
	c := &Call{RolloutID: "r0", ModelCallID: "c1", Sink: s}
	require.True(t, c.CommitEntry(baseEntry("r0", "c1")).Written)
	o := c.MarkIncomplete(Cause("stream_truncated"), "the stream ended before its last chunk", nil)
	assert.True(t, o.Marked)
	assert.Equal(t, Cause("stream_truncated"), o.Cause)
	incomplete, err := s.IsIncomplete("r0")
	require.NoError(t, err)
	assert.True(t, incomplete)
	assert.Equal(t, "c1\n", files(t, s.Dir())["r0.tokens.incomplete"])

	o = (&Call{RolloutID: "r0", ModelCallID: "c2"}).MarkIncomplete(Cause("stream_truncated"), "", nil)
	assert.False(t, o.Marked)
	assert.Error(t, o.MarkErr)
}
