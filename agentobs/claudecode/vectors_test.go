package claudecode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
)

// The SPEC §8 vectors #91–#101 (Gym's responses_api_agents/claude_code_agent/tests/
// test_observability.py), with transcript fixtures under testdata/<case>/claude and golden
// bundles testdata/<case>/bundle.golden.json. The goldens were checked against the reference
// extractor (Gym commit 07d6b0d, run on Python with pydantic): equal JSON, except the order of the
// gaps SPEC §9 #14 calls nondeterministic.

func itemField(t *testing.T, item json.RawMessage, key string) string {
	t.Helper()
	v, err := ojson.Parse(item)
	require.NoError(t, err)
	f, ok := v.Get(key)
	require.True(t, ok, "item %s has no %q", item, key)
	if f.IsNull() {
		return "<null>"
	}
	s, ok := f.AsString()
	require.True(t, ok)
	return s
}

func TestExtractVectors(t *testing.T) {
	policy := agentobs.ModelServerRef{Type: agentobs.ModelRefTypeResponsesAPIModels, Name: "policy"}
	tests := []struct {
		name  string // testdata directory
		opts  Options
		setup func(t *testing.T, dir string)
		check func(t *testing.T, b agentobs.AgentObservationBundle)
	}{
		{
			name: "91_nested_tree",
			opts: Options{ModelServerName: "policy", RootStatus: agentobs.InvocationStatusCompleted, RootDurationMS: ptr(5000.0)},
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				invs := invocations(b)
				require.Len(t, invs, 3)
				root, child, grandchild := invs["session-root"], invs["agent-child"], invs["agent-grandchild"]
				require.NotNil(t, root)
				require.NotNil(t, child)
				require.NotNil(t, grandchild)
				assert.Equal(t, agentobs.InvocationStatusCompleted, root.Status)
				assert.Equal(t, ptr(5000.0), root.DurationMS)
				assert.Nil(t, root.ParentInvocationID)
				assert.Equal(t, ptr("session-root"), child.ParentInvocationID)
				assert.Equal(t, ptr("tool-child"), child.SpawnedByToolCallID)
				assert.Equal(t, agentobs.InvocationStatusCompleted, child.Status)
				assert.Equal(t, ptr("agent-child"), grandchild.ParentInvocationID)
				assert.Equal(t, ptr("tool-grandchild"), grandchild.SpawnedByToolCallID)
				assert.Equal(t, agentobs.InvocationStatusIncomplete, grandchild.Status)
				assert.Equal(t, ptr("timeout"), grandchild.ErrorType)
				assert.Equal(t, []string{"msg-root"}, responseIDs(root.ModelCalls))
				assert.Equal(t, []string{"msg-child"}, responseIDs(child.ModelCalls))
				assert.Equal(t, []string{"msg-grandchild"}, responseIDs(grandchild.ModelCalls))
				for _, inv := range invs {
					for _, ref := range inv.ModelCalls {
						assert.Equal(t, &policy, ref.ModelRef)
						assert.Nil(t, ref.ModelCallID)
					}
				}
				assert.Equal(t, []string{"message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"},
					itemTypes(t, root))
				for _, item := range root.Conversation {
					if itemField(t, item, "type") == "function_call_output" {
						assert.Equal(t, "<null>", itemField(t, item, "id"))
					}
				}
				var childOutputs []string
				for _, item := range child.Conversation {
					if itemField(t, item, "type") == "function_call_output" {
						childOutputs = append(childOutputs, itemField(t, item, "status"))
					}
				}
				assert.Equal(t, []string{"incomplete"}, childOutputs)

				ts := tools(b)
				require.Len(t, ts, 3)
				assert.InDelta(t, 1000, *ts["tool-fast"].DurationMS, 1e-6)
				assert.InDelta(t, 3000, *ts["tool-child"].DurationMS, 1e-6)
				assert.InDelta(t, 1000, *ts["tool-grandchild"].DurationMS, 1e-6)
				assert.Equal(t, agentobs.ToolCallStatusTimeout, ts["tool-grandchild"].Status)
				for _, tc := range ts {
					assert.Equal(t, ptr(agentobs.TimingSourceArtifact), tc.TimingSource)
				}
				assert.Empty(t, b.Gaps)
				// Component-wise file order: session-root/subagents/… sorts before session-root.jsonl,
				// so the subagents are seen first (SPEC §6.4).
				order := []string{}
				for _, r := range b.Records {
					if inv, ok := r.(*agentobs.AgentInvocation); ok {
						order = append(order, inv.InvocationID)
					}
				}
				assert.Equal(t, []string{"agent-child", "agent-grandchild", "session-root"}, order)
			},
		},
		{
			name: "92_compaction_markers",
			opts: Options{ModelServerName: "policy"},
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				cs := compactions(b)
				require.Len(t, cs, 1)
				c := cs[0]
				assert.Equal(t, ptr("auto"), c.Trigger)
				assert.Equal(t, ptr(1000), c.TokensBefore)
				assert.Equal(t, ptr(200), c.TokensAfter)
				assert.Equal(t, ptr("summary"), c.Summary)
				assert.Equal(t, agentobs.CompactionOutcomeCompleted, c.Outcome)
				require.NotNil(t, c.ObservedAt)
				assert.Equal(t, 1784714401.0, *c.ObservedAt)
				require.NotNil(t, c.BeforeModelCall)
				assert.Equal(t, ptr("msg-before"), c.BeforeModelCall.ResponseID)
				require.NotNil(t, c.AfterModelCall)
				assert.Equal(t, ptr("msg-after"), c.AfterModelCall.ResponseID)
				assert.Empty(t, c.ModelCalls)
				assert.Contains(t, gapCodes(b), GapCompactionReferenceUnavailable)
				assert.NotContains(t, gapCodes(b), GapCompactionTimestampMissing)
			},
		},
		{
			name: "93_compaction_metadata_only",
			opts: Options{ModelServerName: "policy"},
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				cs := compactions(b)
				require.Len(t, cs, 1)
				assert.Equal(t, agentobs.CompactionOutcomeUnknown, cs[0].Outcome)
				assert.Equal(t, ptr(100), cs[0].TokensBefore)
				assert.Equal(t, ptr(80), cs[0].TokensAfter)
				assert.Contains(t, gapCodes(b), GapCompactionOutcomeUnavailable)
			},
		},
		{
			name: "94_malformed_and_incomplete",
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				codes := gapCodes(b)
				for _, want := range []string{GapMalformedTranscriptLine, GapSubagentParentUnavailable, GapToolResultMissing,
					GapToolStartTimestampMissing, GapToolStartMissing, GapToolTimingInvalid} {
					assert.Contains(t, codes, want)
				}
				invs := invocations(b)
				for _, inv := range invs {
					assert.Empty(t, inv.ModelCalls, inv.InvocationID)
				}
				require.Contains(t, invs, "root")
				assert.Equal(t, []string{"function_call", "function_call", "function_call_output", "function_call_output"}, itemTypes(t, invs["root"]))
				assert.NotContains(t, mustJSON(t, b), "redacted-payload-line")
				assert.Contains(t, b.Gaps, newGap(GapMalformedTranscriptLine, nil, ptr("root.jsonl:1")))
			},
		},
		{
			name: "95_cyclic_parents",
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				invs := invocations(b)
				require.Contains(t, invs, "root")
				require.Contains(t, invs, "agent-a")
				assert.Nil(t, invs["root"].ParentInvocationID)
				assert.Equal(t, ptr("root"), invs["agent-a"].ParentInvocationID)
				n := 0
				for _, g := range b.Gaps {
					if g.Code == GapCyclicSubagentParent {
						n++
					}
				}
				assert.Equal(t, 2, n)
				assert.Contains(t, b.Gaps, newGap(GapCyclicSubagentParent, ptr("root"), ptr("root")))
				assert.Contains(t, b.Gaps, newGap(GapCyclicSubagentParent, ptr("root"), ptr("agent-a")))
			},
		},
		{
			name: "96_no_transcript",
			opts: Options{ModelServerName: "policy"},
			// git keeps no empty directory: the fixture's empty projects/ is made here.
			setup: func(t *testing.T, dir string) { require.NoError(t, os.Mkdir(filepath.Join(dir, "projects"), 0o755)) },
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				assert.Empty(t, invocations(b))
				assert.Equal(t, []string{GapAgentTranscriptUnavailable}, gapCodes(b))
			},
		},
		{
			name: "97_unsupported_blocks",
			opts: Options{ModelServerName: "policy"},
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				codes := gapCodes(b)
				assert.Contains(t, codes, GapModelResponseIDMissing)
				assert.Contains(t, codes, GapUnsupportedAssistantContent)
				assert.Contains(t, codes, GapUnsupportedUserContent)
				invs := invocations(b)
				require.Contains(t, invs, "root")
				assert.Empty(t, invs["root"].ModelCalls)
				assert.Contains(t, b.Gaps, newGap(GapUnsupportedAssistantContent, ptr("root"), ptr("image")))
				assert.Contains(t, b.Gaps, newGap(GapUnsupportedUserContent, ptr("root"), ptr("image")))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixtureConfigDir(t, tt.name)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			b, err := Extract(dir, utcOptions(tt.opts))
			require.NoError(t, err)
			require.NoError(t, b.Validate())
			assert.Equal(t, Source, b.Source)
			tt.check(t, b)
			checkGolden(t, tt.name, "bundle.golden.json", b)
		})
	}
}

func TestResolverVectors(t *testing.T) {
	failing := func(agentobs.AgentObservationBundle, []capture.ModelCallRecord) (agentobs.AgentObservationBundle, error) {
		return agentobs.AgentObservationBundle{}, errors.New("injected resolver failure")
	}
	panicking := func(agentobs.AgentObservationBundle, []capture.ModelCallRecord) (agentobs.AgentObservationBundle, error) {
		panic("injected resolver panic")
	}
	tests := []struct {
		name      string // testdata directory
		golden    string
		callIndex map[int]int  // call_index overrides (list position → call_index)
		resolve   resolverFunc // nil: AssociateCompactionCalls alone (no join)
		join      bool         // JoinCalls with resolve (nil = the real resolver)
		check     func(t *testing.T, b agentobs.AgentObservationBundle)
	}{
		{
			name: "98_compaction_call_linked", golden: "joined.golden.json", join: true,
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				inv := invocations(b)["root"]
				require.NotNil(t, inv)
				assert.Equal(t, []string{"call-before", "call-compact", "call-after"}, modelCallIDs(inv.ModelCalls))
				cs := compactions(b)
				require.Len(t, cs, 1)
				assert.Equal(t, []string{"call-compact"}, modelCallIDs(cs[0].ModelCalls))
				assert.NotContains(t, gapCodes(b), GapCompactionReferenceUnavailable)
				assert.Empty(t, b.Gaps)
			},
		},
		{
			name: "99_resolver_failure", golden: "joined.golden.json", join: true, resolve: failing,
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				inv := invocations(b)["root"]
				require.NotNil(t, inv)
				assert.Equal(t, []string{"call-before", "call-after"}, modelCallIDs(inv.ModelCalls))
				assert.Contains(t, b.Gaps, newGap(GapCompactionModelCallJoinFailed, nil, nil))
				// The resolver never ran, so its gap stays.
				assert.Contains(t, gapCodes(b), GapCompactionReferenceUnavailable)
			},
		},
		{
			name: "100_ambiguous_candidates", golden: "resolved.golden.json",
			check: func(t *testing.T, b agentobs.AgentObservationBundle) {
				cs := compactions(b)
				require.Len(t, cs, 1)
				assert.Empty(t, cs[0].ModelCalls)
				assert.Contains(t, gapCodes(b), GapCompactionReferenceUnavailable)
				assert.Contains(t, b.Gaps, newGap(GapCompactionMatchAmbiguous, ptr("root"), ptr("candidate_count=2")))
			},
		},
		{name: "101_marker_in_history", golden: "resolved.golden.json", check: unlinked},
		{name: "101_failed_call", golden: "resolved.golden.json", check: unlinked},
		{name: "101_outside_boundaries", golden: "resolved.golden.json", callIndex: map[int]int{1: 3}, check: unlinked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bundle := loadBundle(t, tt.name)
			before := mustJSON(t, bundle)
			calls := loadCalls(t, filepath.Join("testdata", tt.name, "calls.capture.jsonl"), tt.callIndex)
			var got agentobs.AgentObservationBundle
			var err error
			if tt.join {
				resolve := tt.resolve
				if resolve == nil {
					resolve = AssociateCompactionCalls
				}
				got, err = joinCalls(bundle, calls, resolve)
			} else {
				got, err = AssociateCompactionCalls(bundle, calls)
			}
			require.NoError(t, err)
			require.NoError(t, got.Validate())
			assert.Equal(t, before, mustJSON(t, bundle), "the input bundle must not change")
			tt.check(t, got)
			checkGolden(t, tt.name, tt.golden, got)
		})
	}

	t.Run("99_resolver_panic", func(t *testing.T) {
		bundle := loadBundle(t, "99_resolver_failure")
		calls := loadCalls(t, filepath.Join("testdata", "99_resolver_failure", "calls.capture.jsonl"), nil)
		viaError, err := joinCalls(bundle, calls, failing)
		require.NoError(t, err)
		viaPanic, err := joinCalls(bundle, calls, panicking)
		require.NoError(t, err)
		assert.Equal(t, mustJSON(t, viaError), mustJSON(t, viaPanic))
	})
}

// unlinked is the #101 check: the compaction stays without a call and keeps its gap.
func unlinked(t *testing.T, b agentobs.AgentObservationBundle) {
	t.Helper()
	cs := compactions(b)
	require.Len(t, cs, 1)
	assert.Empty(t, cs[0].ModelCalls)
	assert.Contains(t, gapCodes(b), GapCompactionReferenceUnavailable)
	assert.NotContains(t, gapCodes(b), GapCompactionMatchAmbiguous)
	inv := invocations(b)["root"]
	require.NotNil(t, inv)
	assert.Equal(t, []string{"msg-before", "msg-after"}, responseIDs(inv.ModelCalls))
}
