package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// attachedLine returns line k of the attached rollouts file, its keys' raw JSON values.
func attachedLine(t *testing.T, path string, k int) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for i := 0; sc.Scan(); i++ {
		if i == k {
			var row map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
			return row
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("%s has no line %d", path, k)
	return nil
}

// canonical is the reference the join gives a captured call: {model_call_id, model_ref, response_id}.
func canonical(c capture.ModelCallRecord) agentobs.ModelCallRef {
	return agentobs.ModelCallRef{
		ModelCallID: c.ModelCallID,
		ModelRef:    &agentobs.ModelServerRef{Type: c.ModelRef.Type, Name: c.ModelRef.Name},
		ResponseID:  c.ResponseID,
	}
}

func dumpBundle(t *testing.T, b agentobs.AgentObservationBundle) string {
	t.Helper()
	out, err := b.AppendJSON(nil)
	require.NoError(t, err)
	return string(out)
}

// checkAttachedObservations checks line k of the attached file (rollout r): its
// ng_agent_observations hold the agent's invocation, tool call, sandbox run and compaction, every
// model-call reference resolved to the captured call's canonical reference (model_call_id, model_ref,
// response_id), no gap at all (no ownership gap, no reference gap), a measured tool interval and
// sandbox run, and the compaction's calls and tokens as captured.
func checkAttachedObservations(t *testing.T, store *capture.Store, attachedPath string, k int, r Rollout) {
	t.Helper()
	row := attachedLine(t, attachedPath, k)
	raw, ok := row[agentobs.AttachmentKey]
	require.True(t, ok, "the attached line has %s", agentobs.AttachmentKey)
	bundle, err := agentobs.DecodeBundle(raw)
	require.NoError(t, err, "a valid bundle")
	assert.Equal(t, agentobs.BundleSource, bundle.Source)
	assert.Empty(t, bundle.Gaps, "no ownership gap, no unresolved reference")

	calls, err := store.ReadModelCallRecords(r.ID)
	require.NoError(t, err)
	require.Len(t, calls, 3)
	want := make([]agentobs.ModelCallRef, len(calls))
	for i, c := range calls {
		require.NotNil(t, c.ModelCallID)
		require.NotNil(t, c.ModelRef)
		assert.Equal(t, r.Calls[i].ModelCallID, *c.ModelCallID, "the agent saw the record's model_call_id")
		want[i] = canonical(c)
	}

	var (
		invs  []*agentobs.AgentInvocation
		tools []*agentobs.ToolCallObservation
		comps []*agentobs.ContextCompactionObservation
		boxes []*agentobs.SandboxObservation
	)
	for _, rec := range bundle.Records {
		switch v := rec.(type) {
		case *agentobs.AgentInvocation:
			invs = append(invs, v)
		case *agentobs.ToolCallObservation:
			tools = append(tools, v)
		case *agentobs.ContextCompactionObservation:
			comps = append(comps, v)
		case *agentobs.SandboxObservation:
			boxes = append(boxes, v)
		}
	}
	require.Len(t, invs, 1)
	require.Len(t, tools, 1)
	require.Len(t, comps, 1)
	require.Len(t, boxes, 1)
	inv, tool, comp, box := invs[0], tools[0], comps[0], boxes[0]

	assert.Equal(t, agentobs.InvocationStatusCompleted, inv.Status)
	assert.Equal(t, want, inv.ModelCalls, "the invocation owns every captured call, in call order")
	require.NotNil(t, inv.DurationMS)
	assert.Positive(t, *inv.DurationMS)

	assert.Equal(t, inv.InvocationID, tool.InvocationID)
	require.Len(t, r.Calls[0].ToolCalls, 1)
	assert.Equal(t, r.Calls[0].ToolCalls[0].ID, tool.ToolCallID, "the model's tool call id")
	assert.Equal(t, agentobs.Ptr(toolName), tool.ToolName)
	assert.Equal(t, agentobs.ToolCallStatusCompleted, tool.Status)
	assert.Equal(t, agentobs.Ptr(agentobs.TimingSourceExecutor), tool.TimingSource)
	assert.Equal(t, agentobs.Ptr(SandboxID), tool.SandboxID)
	require.NotNil(t, tool.DurationMS)
	assert.Positive(t, *tool.DurationMS, "tool duration > 0")

	assert.Equal(t, agentobs.SandboxRoleAgent, box.Role)
	assert.Equal(t, agentobs.SandboxOutcomeCompleted, box.Outcome)
	assert.Equal(t, agentobs.Ptr(SandboxID), box.SandboxID)
	assert.Equal(t, agentobs.Ptr(0), box.ExitCode)
	require.NotNil(t, box.WallTimeS, "wall time measured")
	assert.Positive(t, *box.WallTimeS)
	assert.LessOrEqual(t, *box.WallTimeS*1000, *tool.DurationMS+1, "the sandbox ran inside the tool call")
	require.NotNil(t, box.CPUTimeS, "CPU time measured")
	assert.GreaterOrEqual(t, *box.CPUTimeS, 0.0)
	assert.Less(t, *box.CPUTimeS, 5.0, "a shell's arithmetic")
	require.NotNil(t, box.ResourceUsageSource)
	assert.Contains(t, []string{"rusage", "cgroup_v2"}, *box.ResourceUsageSource)
	if box.PeakMemoryMiB != nil { // null when the shell exited before the first sample: never a guess
		assert.GreaterOrEqual(t, *box.PeakMemoryMiB, 0.0)
		assert.Less(t, *box.PeakMemoryMiB, 64.0, "a shell's peak, not the agent's")
	}

	assert.Equal(t, inv.InvocationID, comp.InvocationID)
	assert.Equal(t, agentobs.CompactionOutcomeCompleted, comp.Outcome)
	assert.Equal(t, agentobs.Ptr("auto"), comp.Trigger)
	assert.Equal(t, &want[0], comp.BeforeModelCall, "the call before the compaction")
	assert.Equal(t, []agentobs.ModelCallRef{want[1]}, comp.ModelCalls, "the summarizing call")
	assert.Equal(t, &want[2], comp.AfterModelCall, "the call after the compaction")
	require.NotNil(t, comp.TokensBefore)
	assert.Equal(t, int(*calls[0].TokensIn+*calls[0].TokensOut), *comp.TokensBefore, "the context at the last call, as captured")
	require.NotNil(t, comp.TokensAfter)
	summaryOut := *calls[1].TokensOut
	if calls[1].TokensReasoning != nil {
		summaryOut -= *calls[1].TokensReasoning
	}
	assert.Equal(t, int(summaryOut), *comp.TokensAfter, "the summary's tokens, as captured")
	assert.Equal(t, agentobs.Ptr(r.Calls[1].Text), comp.Summary)

	// The bundle is the observations file's, joined with the captured calls (SPEC §5.4), and
	// joining it again changes nothing (SPEC D11).
	fromFile, exists, err := agentobs.ReadBundle(store, r.ID)
	require.NoError(t, err)
	require.True(t, exists)
	assert.Equal(t, dumpBundle(t, agentobs.Join(fromFile, calls)), dumpBundle(t, bundle))
	assert.Equal(t, dumpBundle(t, bundle), dumpBundle(t, agentobs.Join(bundle, calls)))

	// The Result's summary says the same.
	assert.Equal(t, ObservationSummary{
		Attached: true, Invocations: 1, ToolCalls: 1, Compactions: 1, Sandboxes: 1, References: 6, Resolved: 6,
		ToolMS: *tool.DurationMS, SandboxCPUS: *box.CPUTimeS, PeakMemoryMiB: box.PeakMemoryMiB,
	}, r.Observations)
}

func TestSummarizeObservations(t *testing.T) {
	id1, id2 := "c1", "c2"
	calls := []capture.ModelCallRecord{{ModelCallID: &id1, CallIndex: 0}}
	bundle := agentobs.AgentObservationBundle{
		Source: "gymtrace",
		Records: []agentobs.Record{
			&agentobs.AgentInvocation{InvocationID: "i", ModelCalls: []agentobs.ModelCallRef{{ModelCallID: &id1}, {ModelCallID: &id2}}},
			&agentobs.ToolCallObservation{InvocationID: "i", ToolCallID: "t1", DurationMS: agentobs.Ptr(2.5)},
			&agentobs.ToolCallObservation{InvocationID: "i", ToolCallID: "t2"},
			&agentobs.SandboxObservation{Role: agentobs.SandboxRoleAgent, CPUTimeS: agentobs.Ptr(0.25), WallTimeS: agentobs.Ptr(1.0), PeakMemoryMiB: agentobs.Ptr(3.0)},
			&agentobs.SandboxObservation{Role: agentobs.SandboxRoleAgent, PeakMemoryMiB: agentobs.Ptr(7.0)},
			&agentobs.ContextCompactionObservation{InvocationID: "i", BeforeModelCall: &agentobs.ModelCallRef{ModelCallID: &id1}},
		},
		Gaps: []agentobs.ObservationGap{
			{Code: agentobs.GapModelCallReferenceUnmatched, InvocationID: agentobs.Ptr("i"), Detail: agentobs.Ptr("c2")},
			{Code: "custom"},
		},
	}
	assert.Equal(t, ObservationSummary{
		Attached: true, Invocations: 1, ToolCalls: 2, Compactions: 1, Sandboxes: 2, References: 3, Resolved: 2,
		Gaps:   []string{"model_call_reference_unmatched (c2)", "custom"},
		ToolMS: 2.5, SandboxCPUS: 0.25, PeakMemoryMiB: agentobs.Ptr(7.0),
	}, summarizeObservations(bundle, calls))
	assert.Equal(t, ObservationSummary{Attached: true}, summarizeObservations(agentobs.AgentObservationBundle{Source: "x"}, nil))
}
