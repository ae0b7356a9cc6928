package claudecode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

func TestMatchesCompactionSummary(t *testing.T) {
	const out = "<analysis>\nthinking\n</analysis>\n\n<summary>\n  Keep this.\n\n\n\nAnd this.\n</summary>\n"
	const want = compactionSummaryPrefix + "Summary:\nKeep this.\n\nAnd this."
	tests := []struct {
		name    string
		summary string
		ok      bool
	}{
		{"exact", want, true},
		{"verbatim notice", want + "\n\nRecent messages are preserved verbatim.", true},
		{"all suffixes in order", want +
			"\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /root/.claude/projects/-w/s.jsonl" +
			"\n\nRecent messages are preserved verbatim." +
			"\n\nYour REPL VM state has been cleared as part of this compaction. Variables defined in REPL calls before this point are no longer accessible — redefine any you still need." +
			"\n\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.", true},
		{"suffixes out of order", want + "\n\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened." +
			"\n\nRecent messages are preserved verbatim.", false},
		{"transcript hint without a path", want + "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ", false},
		{"trailing newline", want + "\n", false},
		{"other text", want + " more", false},
		{"no prefix", "Summary:\nKeep this.\n\nAnd this.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, matchesCompactionSummary(tt.summary, out))
		})
	}
}

func TestNormalizeCompactionOutput(t *testing.T) {
	tests := map[string]string{
		"<analysis>a</analysis><analysis>b</analysis>x": "<analysis>b</analysis>x", // only the first block goes
		"<summary> a </summary><summary>b</summary>":    "Summary:\na<summary>b</summary>",
		"\u3000 text \n\n\n\n more \x1c":                "text \n\n more", // Python's strip: Unicode spaces and \x1c
		"<summary>\u2003x\u2003</summary>":              "Summary:\nx",
		"no tags":                                       "no tags",
	}
	for in, want := range tests {
		assert.Equal(t, want, normalizeCompactionOutput(in), "%q", in)
	}
}

// TestResolverInvalidReference: a unique candidate whose canonical reference is invalid (empty
// model_call_id and response_id) fails the resolver, as pydantic's ModelCallRef does; JoinCalls
// then records compaction_model_call_join_failed and still joins.
func TestResolverInvalidReference(t *testing.T) {
	line := `{"model_call_id":"","dialect":"messages","status_code":200,"model_ref":{"type":"responses_api_models","name":"policy"},` +
		`"request":{"messages":[{"role":"user","content":"Your task is to create a detailed summary of this conversation."}]},` +
		`"response":{"id":"","content":[{"type":"text","text":"<summary>S</summary>"}]}}`
	rec, err := capture.BuildModelCallRecord([]byte(line), 0)
	require.NoError(t, err)
	calls := []capture.ModelCallRecord{rec}
	bundle := agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{
		&agentobs.AgentInvocation{InvocationID: "root"},
		&agentobs.ContextCompactionObservation{InvocationID: "root", Outcome: agentobs.CompactionOutcomeCompleted,
			Summary: ptr(compactionSummaryPrefix + "Summary:\nS")},
	}}
	_, err = AssociateCompactionCalls(bundle, calls)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "call_index 0")

	joined, err := JoinCalls(bundle, calls)
	require.NoError(t, err)
	assert.Contains(t, joined.Gaps, newGap(GapCompactionModelCallJoinFailed, nil, nil))
	assert.Empty(t, compactions(joined)[0].ModelCalls)
}

// TestResolverInsertion: the summarizing call goes right before after_model_call, else right after
// the last before_model_call, else at the end; a compaction whose invocation is absent is not
// linked; a candidate shared by two compactions is ambiguous for both.
func TestResolverInsertion(t *testing.T) {
	policy := &agentobs.ModelServerRef{Type: agentobs.ModelRefTypeResponsesAPIModels, Name: "policy"}
	ref := func(rid string) agentobs.ModelCallRef {
		return agentobs.ModelCallRef{ModelRef: policy, ResponseID: ptr(rid)}
	}
	call := func(index int, id, rid string, compact bool) capture.ModelCallRecord {
		last, text := `"continue"`, "ok"
		if compact {
			last, text = `"Your task is to create a detailed summary of the RECENT portion of the conversation"`, "<summary>S</summary>"
		}
		line := `{"model_call_id":"` + id + `","dialect":"messages","status_code":200,"model_ref":{"type":"responses_api_models","name":"policy"},` +
			`"request":{"messages":[{"role":"user","content":` + last + `}]},"response":{"id":"` + rid + `","content":[{"type":"text","text":"` + text + `"}]}}`
		rec, err := capture.BuildModelCallRecord([]byte(line), index)
		require.NoError(t, err)
		return rec
	}
	summary := ptr(compactionSummaryPrefix + "Summary:\nS")
	tests := []struct {
		name        string
		refs        []agentobs.ModelCallRef
		compactions []*agentobs.ContextCompactionObservation
		calls       []capture.ModelCallRecord
		want        []string // the invocation's model_calls (response ids) after resolution
		gaps        []agentobs.ObservationGap
	}{
		{
			name: "before the after reference",
			refs: []agentobs.ModelCallRef{ref("a"), ref("b"), ref("c")},
			compactions: []*agentobs.ContextCompactionObservation{{InvocationID: "root", Outcome: "completed", Summary: summary,
				BeforeModelCall: ptr(ref("a")), AfterModelCall: ptr(ref("b"))}},
			calls: []capture.ModelCallRecord{call(0, "ca", "a", false), call(1, "cx", "x", true), call(2, "cb", "b", false), call(3, "cc", "c", false)},
			want:  []string{"a", "x", "b", "c"},
		},
		{
			name: "after the last before reference",
			refs: []agentobs.ModelCallRef{ref("a"), ref("a"), ref("b")},
			compactions: []*agentobs.ContextCompactionObservation{{InvocationID: "root", Outcome: "completed", Summary: summary,
				BeforeModelCall: ptr(ref("a"))}},
			calls: []capture.ModelCallRecord{call(0, "ca", "a", false), call(1, "cx", "x", true), call(2, "cb", "b", false)},
			want:  []string{"a", "a", "x", "b"},
		},
		{
			name: "at the end",
			refs: []agentobs.ModelCallRef{ref("a")},
			compactions: []*agentobs.ContextCompactionObservation{{InvocationID: "root", Outcome: "completed", Summary: summary,
				AfterModelCall: ptr(ref("z"))}},
			calls: []capture.ModelCallRecord{call(0, "ca", "a", false), call(1, "cx", "x", true), call(2, "cz", "z", false)},
			want:  []string{"a", "x"},
		},
		{
			name:        "absent invocation",
			refs:        []agentobs.ModelCallRef{ref("a")},
			compactions: []*agentobs.ContextCompactionObservation{{InvocationID: "ghost", Outcome: "completed", Summary: summary}},
			calls:       []capture.ModelCallRecord{call(0, "ca", "a", false), call(1, "cx", "x", true)},
			want:        []string{"a"},
			gaps:        []agentobs.ObservationGap{newGap(GapCompactionReferenceUnavailable, ptr("ghost"), nil)},
		},
		{
			name: "shared candidate",
			refs: []agentobs.ModelCallRef{ref("a")},
			compactions: []*agentobs.ContextCompactionObservation{
				{InvocationID: "root", Outcome: "completed", Summary: summary},
				{InvocationID: "root", Outcome: "completed", Summary: summary},
			},
			calls: []capture.ModelCallRecord{call(0, "ca", "a", false), call(1, "cx", "x", true)},
			want:  []string{"a"},
			gaps: []agentobs.ObservationGap{
				newGap(GapCompactionReferenceUnavailable, ptr("root"), nil),
				newGap(GapCompactionReferenceUnavailable, ptr("root"), nil),
				newGap(GapCompactionMatchAmbiguous, ptr("root"), ptr("candidate_count=1")),
				newGap(GapCompactionMatchAmbiguous, ptr("root"), ptr("candidate_count=1")),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			records := []agentobs.Record{&agentobs.AgentInvocation{InvocationID: "root", ModelCalls: tt.refs}}
			gaps := []agentobs.ObservationGap{newGap(GapCompactionReferenceUnavailable, nil, nil)} // always dropped
			for _, c := range tt.compactions {
				records = append(records, c)
				gaps = append(gaps, newGap(GapCompactionReferenceUnavailable, ptr(c.InvocationID), nil))
			}
			got, err := AssociateCompactionCalls(agentobs.AgentObservationBundle{Source: Source, Records: records, Gaps: gaps}, tt.calls)
			require.NoError(t, err)
			assert.Equal(t, tt.want, responseIDs(invocations(got)["root"].ModelCalls))
			want := tt.gaps
			if want == nil {
				want = []agentobs.ObservationGap{}
			}
			assert.Equal(t, want, got.Gaps)
		})
	}
}
