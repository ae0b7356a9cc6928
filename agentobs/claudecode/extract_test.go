package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
)

// extractLines writes one transcript (projects/-work/s.jsonl) holding lines and extracts it.
func extractLines(t *testing.T, opts Options, lines ...string) agentobs.AgentObservationBundle {
	t.Helper()
	dir := t.TempDir()
	writeTranscript(t, dir, "-work/s.jsonl", lines...)
	b, err := Extract(dir, utcOptions(opts))
	require.NoError(t, err)
	require.NoError(t, b.Validate())
	return b
}

// gapsJSON returns the bundle's gaps as one JSON array.
func gapsJSON(t *testing.T, b agentobs.AgentObservationBundle) string {
	t.Helper()
	gaps := b.Gaps
	if gaps == nil {
		gaps = []agentobs.ObservationGap{}
	}
	out, err := json.Marshal(gaps)
	require.NoError(t, err)
	return string(out)
}

func TestConversationItems(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		items []string // exact JSON of the invocation's conversation (SPEC §6.7)
		gaps  string
	}{
		{
			name:  "user string",
			line:  `{"sessionId":"s","type":"user","message":{"role":"user","content":"héllo \"x\"\n"}}`,
			items: []string{`{"content":"héllo \"x\"\n","role":"user","type":"message"}`},
		},
		{
			name: "empty user string adds nothing",
			line: `{"sessionId":"s","type":"user","message":{"role":"user","content":""}}`,
		},
		{
			name:  "role falls back to the event type",
			line:  `{"sessionId":"s","type":"system","message":{"role":"","content":"be brief"}}`,
			items: []string{`{"content":"be brief","role":"system","type":"message"}`},
		},
		{
			name:  "developer list text blocks, even empty",
			line:  `{"sessionId":"s","type":"user","message":{"role":"developer","content":[{"type":"text","text":""},{"type":"text","text":"b"}]}}`,
			items: []string{`{"content":"","role":"developer","type":"message"}`, `{"content":"b","role":"developer","type":"message"}`},
		},
		{
			name:  "assistant string content is one text block with the uuid id",
			line:  `{"sessionId":"s","type":"assistant","uuid":"u1","message":{"id":"m1","role":"assistant","content":"hi"}}`,
			items: []string{`{"id":"u1:text:0","content":[{"annotations":[],"text":"hi","type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}`},
		},
		{
			name:  "item id falls back to the message id; empty text and thinking are skipped",
			line:  `{"sessionId":"s","type":"assistant","uuid":"","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":""},{"type":"thinking","thinking":"t"},{"type":"thinking","thinking":"","signature":"x"}]}}`,
			items: []string{`{"id":"m1:thinking:1","summary":[{"text":"t","type":"summary_text"}],"type":"reasoning","encrypted_content":null,"content":null}`},
		},
		{
			name:  "thinking with signature",
			line:  `{"sessionId":"s","type":"assistant","uuid":"u","message":{"id":"m","role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"c2ln"}]}}`,
			items: []string{`{"id":"u:thinking:0","summary":[{"text":"plan","type":"summary_text"}],"type":"reasoning","encrypted_content":"c2ln","content":null}`},
		},
		{
			name:  "tool_use arguments are Python json.dumps(sort_keys=True, ensure_ascii=False)",
			line:  `{"sessionId":"s","type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"z":[1,2.50,1e2,true,null],"a":{"é":"\u2028\n"},"a":{"k":"last wins"}}}]}}`,
			items: []string{`{"arguments":"{\"a\": {\"k\": \"last wins\"}, \"z\": [1, 2.5, 100.0, true, null]}","call_id":"t1","name":"Bash","type":"function_call","id":"t1","status":"completed"}`},
			gaps:  `[{"code":"tool_result_missing","invocation_id":"s","detail":"t1"},{"code":"tool_start_timestamp_missing","invocation_id":"s","detail":"t1"}]`,
		},
		{
			name:  "tool_use without input or name",
			line:  `{"sessionId":"s","type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":5}]}}`,
			items: []string{`{"arguments":"{}","call_id":"t1","name":"","type":"function_call","id":"t1","status":"completed"}`},
			gaps:  `[{"code":"tool_result_missing","invocation_id":"s","detail":"t1"},{"code":"tool_start_timestamp_missing","invocation_id":"s","detail":"t1"}]`,
		},
		{
			name: "tool_result outputs: text list, non-text list, is_error",
			line: `{"sessionId":"s","type":"user","timestamp":"2026-07-22T10:00:00Z","message":{"role":"user","content":[` +
				`{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"},{"type":"text","text":7},{"type":"text"}]},` +
				`{"type":"tool_result","tool_use_id":"b","content":[{"type":"image","source":{"b":1,"a":"é"}}],"is_error":true},` +
				`{"type":"tool_result","tool_use_id":"c","content":{"k":[1.0]}}]}}`,
			items: []string{
				`{"call_id":"a","output":"x7","type":"function_call_output","id":null,"status":"completed"}`,
				`{"call_id":"b","output":"[{\"source\": {\"a\": \"é\", \"b\": 1}, \"type\": \"image\"}]","type":"function_call_output","id":null,"status":"incomplete"}`,
				`{"call_id":"c","output":"{\"k\": [1.0]}","type":"function_call_output","id":null,"status":"completed"}`,
			},
			gaps: `[{"code":"tool_start_missing","invocation_id":"s","detail":"a"},{"code":"tool_start_missing","invocation_id":"s","detail":"b"},{"code":"tool_start_missing","invocation_id":"s","detail":"c"}]`,
		},
		{
			name:  "a toolUseResult status that is not a string is no status (the reference raises on a list)",
			line:  `{"sessionId":"s","type":"user","timestamp":1,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]},"toolUseResult":{"status":["failed"]}}`,
			items: []string{`{"call_id":"a","output":"r","type":"function_call_output","id":null,"status":"completed"}`},
			gaps:  `[{"code":"tool_start_missing","invocation_id":"s","detail":"a"}]`,
		},
		{
			name: "str() of non-string texts is Python's",
			line: `{"sessionId":"s","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":{"k":"v'","n":null,"b":false}},{"type":"text","text":[1.5,true]},{"type":"text","text":0}]}]}}`,
			items: []string{
				`{"call_id":"a","output":"{'k': \"v'\", 'n': None, 'b': False}[1.5, True]","type":"function_call_output","id":null,"status":"completed"}`,
			},
			gaps: `[{"code":"tool_start_missing","invocation_id":"s","detail":"a"},{"code":"tool_result_timestamp_missing","invocation_id":"s","detail":"a"}]`,
		},
		{
			name: "content gaps",
			line: `{"sessionId":"s","type":"user","message":{"role":"user","content":[5,{"type":"text","text":5},{"type":"image"},{"type":7},{"type":"tool_result"}]}}`,
			gaps: `[{"code":"invalid_user_content","invocation_id":"s","detail":null},{"code":"unsupported_user_content_block","invocation_id":"s","detail":"text"},` +
				`{"code":"unsupported_user_content_block","invocation_id":"s","detail":"image"},{"code":"unsupported_user_content_block","invocation_id":"s","detail":null},` +
				`{"code":"tool_result_id_missing","invocation_id":"s","detail":null}]`,
		},
		{
			name: "user content of another type",
			line: `{"sessionId":"s","type":"user","message":{"role":"user","content":{"a":1}}}`,
			gaps: `[{"code":"unsupported_user_content_block","invocation_id":"s","detail":"dict"}]`,
		},
		{
			name: "assistant content gaps",
			line: `{"sessionId":"s","type":"assistant","message":{"role":"assistant","content":[null,{"type":"text","text":"x"},{"type":"thinking","thinking":"y"},{"type":"tool_use"},{"type":["x"]}]}}`,
			gaps: `[{"code":"model_response_id_missing","invocation_id":"s","detail":null},{"code":"invalid_assistant_content","invocation_id":"s","detail":null},` +
				`{"code":"assistant_item_id_missing","invocation_id":"s","detail":null},{"code":"reasoning_item_id_missing","invocation_id":"s","detail":null},` +
				`{"code":"tool_call_id_missing","invocation_id":"s","detail":null},{"code":"unsupported_assistant_content_block","invocation_id":"s","detail":null}]`,
		},
		{
			name: "assistant content of another type names the Python type",
			line: `{"sessionId":"s","type":"assistant","message":{"id":"m","role":"assistant","content":1.5}}`,
			gaps: `[{"code":"unsupported_assistant_content_block","invocation_id":"s","detail":"float"}]`,
		},
		{
			name: "missing assistant content is NoneType",
			line: `{"sessionId":"s","type":"assistant","message":{"id":"m","role":"assistant"}}`,
			gaps: `[{"code":"unsupported_assistant_content_block","invocation_id":"s","detail":"NoneType"}]`,
		},
		{
			name: "other roles and non-object messages are ignored",
			line: `{"sessionId":"s","type":"summary","message":{"role":"tool","content":"x"}}`,
		},
		{
			name: "a list role is another role, not a failure (the reference raises here)",
			line: `{"sessionId":"s","type":"user","message":{"role":["user"],"content":"x"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := extractLines(t, Options{ModelServerName: "policy", RootStatus: agentobs.InvocationStatusCompleted}, tt.line)
			inv := invocations(b)["s"]
			require.NotNil(t, inv)
			got := make([]string, 0, len(inv.Conversation))
			for _, item := range inv.Conversation {
				got = append(got, string(item))
			}
			want := tt.items
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, got)
			wantGaps := tt.gaps
			if wantGaps == "" {
				wantGaps = "[]"
			}
			assert.JSONEq(t, wantGaps, gapsJSON(t, b))
		})
	}
}

func TestModelCallRefs(t *testing.T) {
	lines := []string{
		`{"sessionId":"s","type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"a"}]}}`,
		`{"sessionId":"s","type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"b"}]}}`,
		`{"sessionId":"s","type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"c"}]}}`,
		`{"sessionId":"s","agentId":"sub","type":"assistant","message":{"id":"m1","role":"assistant","content":"d"}}`,
	}
	t.Run("one ref per distinct id per invocation", func(t *testing.T) {
		b := extractLines(t, Options{ModelServerName: "policy"}, lines...)
		invs := invocations(b)
		assert.Equal(t, []string{"m1", "m2"}, responseIDs(invs["s"].ModelCalls))
		assert.Equal(t, []string{"m1"}, responseIDs(invs["sub"].ModelCalls))
		assert.Equal(t, &agentobs.ModelServerRef{Type: "responses_api_models", Name: "policy"}, invs["s"].ModelCalls[0].ModelRef)
	})
	t.Run("no model server, no refs", func(t *testing.T) {
		b := extractLines(t, Options{}, lines...)
		for _, inv := range invocations(b) {
			assert.Empty(t, inv.ModelCalls)
		}
	})
}

func TestCompactions(t *testing.T) {
	const (
		before   = `{"sessionId":"s","type":"assistant","message":{"id":"m1","role":"assistant","content":"a"}}`
		boundary = `{"sessionId":"s","type":"system","subtype":"compact_boundary","timestamp":"2026-07-22T10:00:00Z","compactMetadata":{"trigger":"manual","preTokens":500}}`
		summary  = `{"sessionId":"s","type":"user","isCompactSummary":true,"timestamp":"2026-07-22T10:00:01Z","message":{"role":"user","content":[{"type":"text","text":"sum"},{"type":"text","text":"mary"}]}}`
		after    = `{"sessionId":"s","type":"assistant","message":{"id":"m2","role":"assistant","content":"b"}}`
	)
	tests := []struct {
		name  string
		lines []string
		check func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle)
	}{
		{
			name:  "boundary then summary merge",
			lines: []string{before, boundary, summary, after},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle) {
				require.Len(t, cs, 1)
				c := cs[0]
				assert.Equal(t, ptr("manual"), c.Trigger)
				assert.Equal(t, ptr(500), c.TokensBefore)
				assert.Nil(t, c.TokensAfter)
				assert.Equal(t, ptr("summary"), c.Summary)
				assert.Equal(t, ptr(1784714400.0), c.ObservedAt)
				assert.Equal(t, agentobs.CompactionOutcomeCompleted, c.Outcome)
				assert.Equal(t, ptr("m1"), c.BeforeModelCall.ResponseID)
				assert.Equal(t, ptr("m2"), c.AfterModelCall.ResponseID)
				assert.JSONEq(t, `[{"code":"compaction_model_call_reference_unavailable","invocation_id":"s","detail":null}]`, gapsJSON(t, b))
			},
		},
		{
			name:  "boundary, summary, boundary all merge (SPEC §9 #14)",
			lines: []string{before, boundary, summary, boundary, after},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, _ agentobs.AgentObservationBundle) {
				require.Len(t, cs, 1)
			},
		},
		{
			name:  "two boundaries do not merge",
			lines: []string{boundary, boundary, after},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle) {
				require.Len(t, cs, 2)
				for _, c := range cs {
					assert.Nil(t, c.BeforeModelCall)
					assert.Equal(t, ptr("m2"), c.AfterModelCall.ResponseID)
				}
				assert.JSONEq(t, `[{"code":"compaction_before_model_call_unavailable","invocation_id":"s","detail":null},`+
					`{"code":"compaction_before_model_call_unavailable","invocation_id":"s","detail":null},`+
					`{"code":"compaction_model_call_reference_unavailable","invocation_id":"s","detail":null},`+
					`{"code":"compaction_model_call_reference_unavailable","invocation_id":"s","detail":null}]`, gapsJSON(t, b))
			},
		},
		{
			name:  "a repeated message id after the compaction leaves after_model_call null (SPEC §9 #14)",
			lines: []string{before, boundary, before, after},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle) {
				require.Len(t, cs, 1)
				assert.Nil(t, cs[0].AfterModelCall)
				assert.Contains(t, b.Gaps, newGap(GapCompactionAfterUnavailable, ptr("s"), nil))
			},
		},
		{
			name:  "pending compaction at the end of the invocation",
			lines: []string{before, boundary},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle) {
				require.Len(t, cs, 1)
				assert.Nil(t, cs[0].AfterModelCall)
				assert.JSONEq(t, `[{"code":"compaction_after_model_call_unavailable","invocation_id":"s","detail":null},`+
					`{"code":"compaction_model_call_reference_unavailable","invocation_id":"s","detail":null}]`, gapsJSON(t, b))
			},
		},
		{
			name: "metadata outcomes and token fallbacks",
			lines: []string{
				`{"sessionId":"s","type":"system","compactMetadata":{"outcome":"FAILED","preTokens":-1,"tokensBefore":true,"postTokens":7}}`,
				after,
				`{"sessionId":"s","type":"system","compact_metadata":{"status":"Interrupted"}}`,
				after,
				`{"sessionId":"s","type":"system","compactMetadata":{"outcome":5,"status":"succeeded","tokensBefore":1.0}}`,
				after,
				`{"sessionId":"s","type":"system","is_error":true,"compactMetadata":{"status":"success"}}`,
				after,
				`{"sessionId":"s","type":"system","compactMetadata":{"status":"FAİLED"}}`,
				after,
				`{"sessionId":"s","type":"system","message":{"role":"system","compactMetadata":{"x":1},"content":""}}`,
			},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, _ agentobs.AgentObservationBundle) {
				require.Len(t, cs, 6)
				outcomes := []agentobs.CompactionOutcome{}
				for _, c := range cs {
					outcomes = append(outcomes, c.Outcome)
				}
				assert.Equal(t, []agentobs.CompactionOutcome{"failed", "aborted", "completed", "failed", "unknown", "unknown"}, outcomes)
				assert.Nil(t, cs[0].TokensBefore)
				assert.Equal(t, ptr(7), cs[0].TokensAfter)
				assert.Nil(t, cs[2].TokensBefore)
			},
		},
		{
			name: "an empty metadata object found first counts as none",
			lines: []string{
				`{"sessionId":"s","type":"system","compactMetadata":{},"message":{"role":"system","compactMetadata":{"trigger":"auto"}}}`,
			},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, _ agentobs.AgentObservationBundle) {
				assert.Empty(t, cs)
			},
		},
		{
			name: "summary only in the message flag",
			lines: []string{
				`{"sessionId":"s","type":"user","message":{"role":"user","isCompactSummary":true,"content":""}}`,
			},
			check: func(t *testing.T, cs []*agentobs.ContextCompactionObservation, b agentobs.AgentObservationBundle) {
				require.Len(t, cs, 1)
				assert.Nil(t, cs[0].Summary) // empty text is null
				assert.Equal(t, agentobs.CompactionOutcomeCompleted, cs[0].Outcome)
				assert.Contains(t, b.Gaps, newGap(GapCompactionTimestampMissing, ptr("s"), nil))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := extractLines(t, Options{ModelServerName: "policy", RootStatus: agentobs.InvocationStatusCompleted}, tt.lines...)
			tt.check(t, compactions(b), b)
		})
	}
}

func TestCompactionAttempts(t *testing.T) {
	attempts := []CompactionAttempt{
		{InvocationID: "s", Outcome: agentobs.CompactionOutcomeFailed},
		{InvocationID: "gone", Outcome: ""},                               // unknown
		{InvocationID: "x", Outcome: agentobs.CompactionOutcomeCompleted}, // ignored
		{InvocationID: "", Outcome: agentobs.CompactionOutcomeAborted},    // ignored
		{InvocationID: "later", Outcome: agentobs.CompactionOutcomeAborted},
	}
	t.Run("with events", func(t *testing.T) {
		b := extractLines(t, Options{CompactionAttempts: attempts, RootStatus: agentobs.InvocationStatusFailed},
			`{"sessionId":"s","type":"system","subtype":"compact_boundary","timestamp":"2026-07-22T10:00:00Z"}`)
		cs := compactions(b)
		require.Len(t, cs, 4)
		assert.Equal(t, []string{"s", "gone", "later", "s"}, []string{cs[0].InvocationID, cs[1].InvocationID, cs[2].InvocationID, cs[3].InvocationID})
		assert.Equal(t, agentobs.CompactionOutcomeUnknown, cs[1].Outcome)
		var ids []string
		for _, r := range b.Records {
			if inv, ok := r.(*agentobs.AgentInvocation); ok {
				ids = append(ids, inv.InvocationID)
				assert.Equal(t, agentobs.InvocationStatusFailed, inv.Status) // attempt-only invocations are roots
			}
		}
		assert.Equal(t, []string{"s", "gone", "later"}, ids)
		assert.Equal(t, []string{
			"compaction_before_model_call_unavailable", "compaction_after_model_call_unavailable",
			"compaction_before_model_call_unavailable", "compaction_after_model_call_unavailable",
			"compaction_before_model_call_unavailable", "compaction_after_model_call_unavailable",
			"compaction_before_model_call_unavailable", "compaction_after_model_call_unavailable",
			"compaction_model_call_reference_unavailable", "compaction_timestamp_missing", // s, failed
			"compaction_model_call_reference_unavailable", "compaction_outcome_unavailable", "compaction_timestamp_missing", // gone
			"compaction_model_call_reference_unavailable", "compaction_timestamp_missing", // later
			"compaction_model_call_reference_unavailable", // the transcript's boundary
		}, gapCodes(b))
	})
	t.Run("without events", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "projects"), 0o755))
		b, err := Extract(dir, Options{CompactionAttempts: attempts[:1]})
		require.NoError(t, err)
		assert.Equal(t, []string{"agent_transcript_unavailable", "compaction_before_model_call_unavailable",
			"compaction_after_model_call_unavailable", "compaction_model_call_reference_unavailable",
			"compaction_timestamp_missing", "invocation_outcome_unavailable"}, gapCodes(b))
		require.Len(t, compactions(b), 1)
		require.Len(t, invocations(b), 1)
	})
}

func TestSubagentLinks(t *testing.T) {
	result := func(inv, agent, tool, child, status string) string {
		agentKey := ""
		if agent != "" {
			agentKey = `"agentId":"` + agent + `",`
		}
		return `{"sessionId":"` + inv + `",` + agentKey + `"type":"user","timestamp":"2026-07-22T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + tool + `","content":"r"}]},"toolUseResult":{"agentId":"` + child + `","status":"` + status + `"}}`
	}
	t.Run("conflicting parents drop the link", func(t *testing.T) {
		b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
			result("s", "", "t1", "kid", "completed"),
			result("s", "", "t2", "kid", "completed"),
			result("s", "", "t3", "kid", "completed"),
			`{"sessionId":"s","agentId":"kid","type":"assistant","message":{"id":"m","role":"assistant","content":"x"}}`)
		kid := invocations(b)["kid"]
		require.NotNil(t, kid)
		assert.Nil(t, kid.ParentInvocationID)
		assert.Equal(t, agentobs.InvocationStatusUnknown, kid.Status)
		assert.Contains(t, b.Gaps, newGap(GapConflictingSubagentParent, ptr("kid"), nil))
		assert.Contains(t, b.Gaps, newGap(GapSubagentParentUnavailable, ptr("kid"), nil))
	})
	t.Run("the same link twice is kept", func(t *testing.T) {
		b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
			result("s", "", "t1", "kid", "failed"), result("s", "", "t1", "kid", "completed"))
		kid := invocations(b)["kid"]
		require.NotNil(t, kid)
		assert.Equal(t, ptr("s"), kid.ParentInvocationID)
		assert.Equal(t, agentobs.InvocationStatusFailed, kid.Status)
		assert.Equal(t, ptr("failed"), kid.ErrorType)
		// kid has no transcript of its own; t1 finished twice.
		assert.Contains(t, b.Gaps, newGap(GapSubagentTranscriptMissing, ptr("kid"), nil))
		assert.Contains(t, b.Gaps, newGap(GapAmbiguousToolArtifact, ptr("s"), ptr("t1")))
	})
	t.Run("two tool results make the relation ambiguous", func(t *testing.T) {
		b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
			`{"sessionId":"s","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"},{"type":"tool_result","tool_use_id":"b"}]},"toolUseResult":{"agentId":"kid"}}`)
		assert.Contains(t, b.Gaps, newGap(GapAmbiguousSubagentRelation, ptr("s"), nil))
		assert.NotContains(t, invocations(b), "kid")
	})
	t.Run("cancelled and interrupted links are incomplete", func(t *testing.T) {
		b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
			result("s", "", "t1", "k1", "cancelled"),
			`{"sessionId":"s","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"}]},"toolUseResult":{"agentId":"k2","interrupted":true,"status":"failed"}}`)
		invs := invocations(b)
		assert.Equal(t, agentobs.InvocationStatusIncomplete, invs["k1"].Status)
		assert.Equal(t, ptr("cancelled"), invs["k1"].ErrorType)
		assert.Equal(t, agentobs.InvocationStatusIncomplete, invs["k2"].Status)
		assert.Nil(t, invs["k2"].ErrorType)
		assert.Equal(t, agentobs.ToolCallStatusCancelled, tools(b)["t1"].Status)
	})
	t.Run("a missing child transcript is placed at its link", func(t *testing.T) {
		b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
			`{"sessionId":"a","type":"user","message":{"role":"user","content":"x"}}`,
			result("a", "", "t1", "kid", "completed"),
			`{"sessionId":"z","type":"user","message":{"role":"user","content":"y"}}`)
		var ids []string
		for _, r := range b.Records {
			if inv, ok := r.(*agentobs.AgentInvocation); ok {
				ids = append(ids, inv.InvocationID)
			}
		}
		assert.Equal(t, []string{"a", "kid", "z"}, ids)
	})
}

func TestToolObservations(t *testing.T) {
	use := func(id, ts string) string {
		return `{"sessionId":"s","type":"assistant","timestamp":` + ts + `,"message":{"id":"m` + id + `","role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{}}]}}`
	}
	res := func(id, ts string) string {
		return `{"sessionId":"s","type":"user","timestamp":` + ts + `,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}}`
	}
	b := extractLines(t, Options{RootStatus: agentobs.InvocationStatusCompleted},
		use("b", `"2026-07-22T10:00:00.250Z"`), res("b", `1784714401.5`),
		use("a", `"2026-07-22T10:00:00Z"`), res("a", `"2026-07-22T12:00:00+02:00"`),
		use("dup", `1`), use("dup", `2`), res("dup", `3`),
		use("c", `1`), res("c", `null`))
	ts := tools(b)
	assert.Equal(t, ptr(1250.0), ts["b"].DurationMS)
	assert.Equal(t, ptr(0.0), ts["a"].DurationMS)
	assert.Equal(t, ptr("Bash"), ts["a"].ToolName)
	assert.NotContains(t, ts, "dup")
	assert.Nil(t, ts["c"].CompletedAt)
	assert.Equal(t, ptr(agentobs.TimingSourceArtifact), ts["c"].TimingSource)
	var order []string
	for _, r := range b.Records {
		if tc, ok := r.(*agentobs.ToolCallObservation); ok {
			order = append(order, tc.ToolCallID)
		}
	}
	assert.Equal(t, []string{"a", "b", "c"}, order) // by tool call id within the invocation
	assert.JSONEq(t, `[{"code":"tool_result_timestamp_missing","invocation_id":"s","detail":"c"},`+
		`{"code":"ambiguous_tool_artifact","invocation_id":"s","detail":"dup"}]`, gapsJSON(t, b))
}

// TestDeterministicGapOrder checks the order chosen where the reference iterates Python sets
// (SPEC §9 #14): invocation-level gaps follow the records' (first seen, id) order, every run.
func TestDeterministicGapOrder(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for _, id := range []string{"zeta", "alpha", "mid", "beta"} {
		lines = append(lines, `{"sessionId":"root","agentId":"`+id+`","type":"assistant","message":{"id":"m","role":"assistant","content":"x"}}`)
	}
	writeTranscript(t, dir, "-work/s.jsonl", lines...)
	writeTranscript(t, dir, "-work/t.jsonl", `{"sessionId":"root","type":"user","message":{"role":"user","content":"go"}}`)
	want := `[{"code":"subagent_parent_unavailable","invocation_id":"zeta","detail":null},` +
		`{"code":"subagent_parent_unavailable","invocation_id":"alpha","detail":null},` +
		`{"code":"subagent_parent_unavailable","invocation_id":"mid","detail":null},` +
		`{"code":"subagent_parent_unavailable","invocation_id":"beta","detail":null},` +
		`{"code":"invocation_outcome_unavailable","invocation_id":"zeta","detail":null},` +
		`{"code":"invocation_outcome_unavailable","invocation_id":"alpha","detail":null},` +
		`{"code":"invocation_outcome_unavailable","invocation_id":"mid","detail":null},` +
		`{"code":"invocation_outcome_unavailable","invocation_id":"beta","detail":null},` +
		`{"code":"invocation_outcome_unavailable","invocation_id":"root","detail":null}]`
	for i := 0; i < 5; i++ {
		b, err := Extract(dir, Options{})
		require.NoError(t, err)
		assert.JSONEq(t, want, gapsJSON(t, b))
	}
}

// TestMalformedLinesNeverLeak: nothing of a line that is not a usable event reaches the bundle
// (SPEC §6.4: "line content never copied").
func TestMalformedLinesNeverLeak(t *testing.T) {
	const secret = "sk-SECRET-4f9a"
	dir := t.TempDir()
	writeTranscript(t, dir, "-work/s.jsonl",
		`{"sessionId":"s","type":"user","message":{"role":"user","content":"`+secret,
		`["`+secret+`"]`,
		`"`+secret+`"`,
		`{"type":"user","message":{"role":"user","content":"`+secret+`"}}`,
		`{"sessionId":7,"type":"user","message":{"role":"user","content":"`+secret+`"}}`,
		"\xff\xfe{"+secret,
		`{"sessionId":"s","type":"user","message":{"role":"user","content":"visible"}} `+secret,
		`{"sessionId":"s","type":"user","message":{"role":"user","content":"visible"}}`)
	writeTranscript(t, dir, "-work/"+"plain.jsonl", secret)
	b, err := Extract(dir, Options{})
	require.NoError(t, err)
	out := mustJSON(t, b)
	assert.NotContains(t, out, secret)
	assert.NotContains(t, out, "SECRET")
	assert.Contains(t, out, "visible")
	assert.JSONEq(t, `[{"code":"malformed_transcript_line","invocation_id":null,"detail":"plain.jsonl:1"},`+
		`{"code":"malformed_transcript_line","invocation_id":null,"detail":"s.jsonl:1"},`+
		`{"code":"invalid_transcript_record","invocation_id":null,"detail":"s.jsonl:2"},`+
		`{"code":"invalid_transcript_record","invocation_id":null,"detail":"s.jsonl:3"},`+
		`{"code":"malformed_transcript_line","invocation_id":null,"detail":"s.jsonl:6"},`+
		`{"code":"malformed_transcript_line","invocation_id":null,"detail":"s.jsonl:7"},`+
		`{"code":"invocation_outcome_unavailable","invocation_id":"s","detail":null}]`, gapsJSON(t, b))
}

func TestEndToEndCompactionLink(t *testing.T) {
	const name = "e2e_compaction_link"
	b, err := Extract(fixtureConfigDir(t, name), utcOptions(Options{ModelServerName: "policy", RootStatus: agentobs.InvocationStatusCompleted}))
	require.NoError(t, err)
	require.Len(t, compactions(b), 1)
	assert.Contains(t, gapCodes(b), GapCompactionReferenceUnavailable)

	calls := loadCalls(t, filepath.Join("testdata", name, "calls.capture.jsonl"), nil)
	joined, err := JoinCalls(b, calls)
	require.NoError(t, err)
	inv := invocations(joined)["root"]
	require.NotNil(t, inv)
	assert.Equal(t, []string{"call-before", "call-compact", "call-after"}, modelCallIDs(inv.ModelCalls))
	c := compactions(joined)[0]
	assert.Equal(t, []string{"call-compact"}, modelCallIDs(c.ModelCalls))
	assert.Equal(t, ptr("call-before"), c.BeforeModelCall.ModelCallID)
	assert.Equal(t, ptr("call-after"), c.AfterModelCall.ModelCallID)
	assert.Equal(t, ptr(155000), c.TokensBefore)
	assert.Empty(t, joined.Gaps)
	assert.Equal(t, ptr(2250.0), tools(joined)["toolu_01"].DurationMS)
	checkGolden(t, name, "joined.golden.json", joined)

	again, err := JoinCalls(joined, calls)
	require.NoError(t, err)
	assert.Equal(t, mustJSON(t, joined), mustJSON(t, again), "JoinCalls is idempotent (SPEC D11)")
}

func TestJoinCallsIdempotent(t *testing.T) {
	for _, name := range []string{"98_compaction_call_linked", "99_resolver_failure", "100_ambiguous_candidates", "101_failed_call"} {
		t.Run(name, func(t *testing.T) {
			calls := loadCalls(t, filepath.Join("testdata", name, "calls.capture.jsonl"), nil)
			once, err := JoinCalls(loadBundle(t, name), calls)
			require.NoError(t, err)
			twice, err := JoinCalls(once, calls)
			require.NoError(t, err)
			assert.Equal(t, mustJSON(t, once), mustJSON(t, twice))
		})
	}
}

func TestJoinCallsOtherSourcesAndInvalidBundles(t *testing.T) {
	bundle := loadBundle(t, "98_compaction_call_linked")
	calls := loadCalls(t, filepath.Join("testdata", "98_compaction_call_linked", "calls.capture.jsonl"), nil)

	bundle.Source = "hermes"
	got, err := JoinCalls(bundle, calls)
	require.NoError(t, err)
	assert.Equal(t, mustJSON(t, agentobs.Join(bundle, calls)), mustJSON(t, got), "no resolver for other sources")
	resolved, err := AssociateCompactionCalls(bundle, calls)
	require.NoError(t, err)
	assert.Equal(t, mustJSON(t, bundle), mustJSON(t, resolved))

	bad := loadBundle(t, "98_compaction_call_linked")
	bad.Records = append(bad.Records, &agentobs.AgentInvocation{InvocationID: "root"})
	_, err = JoinCalls(bad, calls)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invocation_id must be unique")
}

func TestOptionsErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"status", Options{RootStatus: "done"}, `RootStatus "done"`},
		{"negative duration", Options{RootDurationMS: ptr(-1.0)}, "RootDurationMS -1"},
		{"rollout id", Options{RolloutID: "a/b"}, "RolloutID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract(dir, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = Observe(dir, Options{RolloutID: "0-0", RootStatus: tt.opts.RootStatus, RootDurationMS: tt.opts.RootDurationMS})
			if tt.name != "rollout id" {
				require.Error(t, err)
			}
		})
	}
}

// TestExtractDoesNotReadOutsideProjects: files beside projects/ are not evidence (SPEC §6.4).
func TestExtractDoesNotReadOutsideProjects(t *testing.T) {
	dir := fixtureConfigDir(t, "91_nested_tree")
	b, err := Extract(dir, Options{})
	require.NoError(t, err)
	assert.False(t, strings.Contains(mustJSON(t, b), "unrelated"))
}
