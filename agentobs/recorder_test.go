package agentobs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// scenario records one rollout with every kind of observation and returns the recorder and the
// invocation ids (root, sub).
func scenario(t *testing.T, h *harness, rid string) (*agentobs.Recorder, string, string) {
	t.Helper()
	clock := newStepClock(10 * time.Millisecond)
	rec, err := agentobs.NewRecorder(h.tp, rid, agentobs.WithClock(clock.now))
	require.NoError(t, err)

	ctx, root := rec.StartInvocation(t.Context(), "planner", agentobs.WithAgentID("agent-7"))
	require.NoError(t, agentobs.RecordModelCall(ctx, "call-1"))

	tctx, tool := agentobs.StartToolCall(ctx, "delegate", "tc-1", agentobs.WithSandboxID("box-1"))
	sctx, sub := rec.StartInvocation(tctx, "researcher")
	require.NoError(t, agentobs.RecordModelCall(sctx, "call-2"))
	_, fetch := agentobs.StartToolCall(sctx, "fetch", "tc-2")
	fetch.End(context.DeadlineExceeded)
	sub.End(nil)
	tool.End(nil)

	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	require.NoError(t, agentobs.RecordModelCall(cctx, "call-3"))
	comp.End(agentobs.CompactionResult{TokensBefore: agentobs.Ptr(1000), TokensAfter: agentobs.Ptr(200), Summary: agentobs.Ptr("short")})
	require.NoError(t, agentobs.RecordModelCall(cctx, "call-4"), "after End the compaction's context records on the invocation")

	start := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	require.NoError(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{
		Role: agentobs.SandboxRoleVerifier, Provider: agentobs.Ptr("local"), SandboxID: agentobs.Ptr("box-1"),
		Outcome: agentobs.SandboxOutcomeOOM, ExitCode: agentobs.Ptr(137), WallTimeS: agentobs.Ptr(1.5),
		CPUTimeS: agentobs.Ptr(0.75), PeakMemoryMiB: agentobs.Ptr(64.0), ResourceUsageSource: agentobs.Ptr("rusage"),
	}, start, start.Add(1500*time.Millisecond)))

	root.End(&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist})
	root.End(nil) // ignored
	return rec, root.ID(), sub.ID()
}

func TestRecorderSpans(t *testing.T) {
	h := newHarness(t)
	rid := "task-1_a.2"
	_, rootID, subID := scenario(t, h, rid)
	spans := h.byName()
	require.Len(t, h.exp.GetSpans(), 6)

	root := spans["invoke_agent planner"]
	tool := spans["execute_tool delegate"]
	sub := spans["invoke_agent researcher"]
	fetch := spans["execute_tool fetch"]
	comp := spans["context_compaction"]
	box := spans["sandbox verifier"]
	for name, s := range map[string]string{"root": root.Name, "tool": tool.Name, "sub": sub.Name, "fetch": fetch.Name, "comp": comp.Name, "box": box.Name} {
		require.NotEmpty(t, s, name)
	}

	t.Run("trace and parents", func(t *testing.T) {
		for _, s := range h.exp.GetSpans() {
			assert.Equal(t, trace.SpanKindInternal, s.SpanKind, s.Name)
			assert.Equal(t, rollout.ID{Rollout: rid}.TraceID(), s.SpanContext.TraceID(), s.Name)
		}
		assert.Equal(t, rollout.ID{Rollout: rid}.RootSpanID(), root.Parent.SpanID(), "a root invocation hangs under the rollout root")
		assert.True(t, root.Parent.IsRemote())
		assert.Equal(t, root.SpanContext.SpanID(), tool.Parent.SpanID())
		assert.Equal(t, tool.SpanContext.SpanID(), sub.Parent.SpanID())
		assert.Equal(t, sub.SpanContext.SpanID(), fetch.Parent.SpanID())
		assert.Equal(t, root.SpanContext.SpanID(), comp.Parent.SpanID())
		assert.Equal(t, root.SpanContext.SpanID(), box.Parent.SpanID())
		assert.Equal(t, root.SpanContext.SpanID().String(), rootID)
		assert.Equal(t, sub.SpanContext.SpanID().String(), subID)
	})

	t.Run("invocation attributes", func(t *testing.T) {
		a := attrMap(root.Attributes)
		assert.Equal(t, "invoke_agent", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "planner", a["gen_ai.agent.name"].AsString())
		assert.Equal(t, "agent-7", a["gen_ai.agent.id"].AsString())
		assert.Equal(t, rid, a["gymtrace.rollout.id"].AsString())
		assert.Equal(t, rootID, a["gymtrace.agent.invocation.id"].AsString())
		assert.Equal(t, "failed", a["gymtrace.observation.status"].AsString())
		assert.Equal(t, "*fs.PathError", a["error.type"].AsString())
		assert.Equal(t, []string{"call-1", "call-3", "call-4"}, a["gymtrace.model_call.ids"].AsStringSlice(), "the compaction's call is the invocation's too")
		assert.Equal(t, codes.Error, root.Status.Code)
		assert.Equal(t, "open /x: file does not exist", root.Status.Description)
		require.Len(t, root.Events, 3)
		for i, id := range []string{"call-1", "call-3", "call-4"} {
			assert.Equal(t, "gymtrace.model_call", root.Events[i].Name)
			assert.Equal(t, id, attrMap(root.Events[i].Attributes)["gymtrace.model_call.id"].AsString())
		}

		s := attrMap(sub.Attributes)
		assert.Equal(t, rootID, s["gymtrace.agent.parent_invocation.id"].AsString())
		assert.Equal(t, "tc-1", s["gymtrace.agent.spawned_by_tool_call.id"].AsString())
		assert.Equal(t, "completed", s["gymtrace.observation.status"].AsString())
		assert.Equal(t, codes.Unset, sub.Status.Code)
		_, hasAgentID := s["gen_ai.agent.id"]
		assert.False(t, hasAgentID)
	})

	t.Run("tool attributes", func(t *testing.T) {
		a := attrMap(tool.Attributes)
		assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "delegate", a["gen_ai.tool.name"].AsString())
		assert.Equal(t, "tc-1", a["gen_ai.tool.call.id"].AsString())
		assert.Equal(t, rootID, a["gymtrace.agent.invocation.id"].AsString())
		assert.Equal(t, "executor", a["gymtrace.tool.timing_source"].AsString())
		assert.Equal(t, "box-1", a["gymtrace.sandbox.id"].AsString())
		assert.Equal(t, "completed", a["gymtrace.observation.status"].AsString())

		f := attrMap(fetch.Attributes)
		assert.Equal(t, subID, f["gymtrace.agent.invocation.id"].AsString())
		assert.Equal(t, "timeout", f["gymtrace.observation.status"].AsString())
		assert.Equal(t, "timeout", f["error.type"].AsString())
		assert.Equal(t, codes.Error, fetch.Status.Code)
		assert.Equal(t, 10*time.Millisecond, fetch.EndTime.Sub(fetch.StartTime), "one clock step")
	})

	t.Run("compaction and sandbox attributes", func(t *testing.T) {
		c := attrMap(comp.Attributes)
		assert.True(t, c["gen_ai.conversation.compacted"].AsBool())
		_, hasOp := c["gen_ai.operation.name"]
		assert.False(t, hasOp, "a compaction span is not a model call")
		assert.Equal(t, "auto", c["gymtrace.compaction.trigger"].AsString())
		assert.Equal(t, int64(1000), c["gymtrace.compaction.tokens_before"].AsInt64())
		assert.Equal(t, int64(200), c["gymtrace.compaction.tokens_after"].AsInt64())
		assert.Equal(t, "short", c["gymtrace.compaction.summary"].AsString())
		assert.Equal(t, []string{"call-3"}, c["gymtrace.model_call.ids"].AsStringSlice())

		b := attrMap(box.Attributes)
		assert.Equal(t, "verifier", b["gymtrace.sandbox.role"].AsString())
		assert.Equal(t, "oom", b["gymtrace.observation.status"].AsString())
		assert.Equal(t, int64(137), b["gymtrace.sandbox.exit_code"].AsInt64())
		assert.Equal(t, 0.75, b["gymtrace.sandbox.cpu_time_s"].AsFloat64())
		assert.Equal(t, 64.0, b["gymtrace.sandbox.peak_memory_mib"].AsFloat64())
		assert.Equal(t, codes.Error, box.Status.Code)
		assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC), box.StartTime.UTC())
		assert.Equal(t, 1500*time.Millisecond, box.EndTime.Sub(box.StartTime))
	})
}

func TestRecorderBundle(t *testing.T) {
	h := newHarness(t)
	rec, rootID, subID := scenario(t, h, "r-7")
	b := requireSameBundles(t, h, rec)
	assert.Equal(t, agentobs.BundleSource, b.Source)
	assert.Empty(t, b.Gaps)
	r := split(b)
	require.Len(t, r.invocations, 2)
	require.Len(t, r.tools, 2)
	require.Len(t, r.compactions, 1)
	require.Len(t, r.sandboxes, 1)

	root, sub := r.invocations[rootID], r.invocations[subID]
	require.NotNil(t, root)
	require.NotNil(t, sub)
	assert.Nil(t, root.ParentInvocationID)
	assert.Equal(t, agentobs.InvocationStatusFailed, root.Status)
	assert.Equal(t, "*fs.PathError", str(root.ErrorType))
	assert.Equal(t, []string{"call-1", "call-3", "call-4"}, refIDs(root.ModelCalls))
	assert.Equal(t, rootID, str(sub.ParentInvocationID))
	assert.Equal(t, "tc-1", str(sub.SpawnedByToolCallID))
	assert.Equal(t, agentobs.InvocationStatusCompleted, sub.Status)
	assert.Equal(t, []string{"call-2"}, refIDs(sub.ModelCalls))
	require.NotNil(t, sub.DurationMS)
	assert.Equal(t, 40.0, *sub.DurationMS, "four clock steps after its start: call-2, fetch start, fetch end, its end")

	tc1, tc2 := r.tools["tc-1"], r.tools["tc-2"]
	assert.Equal(t, rootID, tc1.InvocationID)
	assert.Equal(t, "box-1", str(tc1.SandboxID))
	assert.Equal(t, agentobs.ToolCallStatusCompleted, tc1.Status)
	assert.Equal(t, agentobs.TimingSourceExecutor, *tc1.TimingSource)
	assert.Equal(t, subID, tc2.InvocationID)
	assert.Equal(t, agentobs.ToolCallStatusTimeout, tc2.Status)
	assert.Equal(t, "timeout", str(tc2.ErrorType))
	require.NotNil(t, tc2.DurationMS)
	assert.Equal(t, 10.0, *tc2.DurationMS)
	assert.InDelta(t, *tc2.StartedAt+0.01, *tc2.CompletedAt, 1e-6)

	c := r.compactions[0]
	assert.Equal(t, rootID, c.InvocationID)
	assert.Equal(t, "auto", str(c.Trigger))
	assert.Equal(t, agentobs.CompactionOutcomeCompleted, c.Outcome)
	assert.Equal(t, 1000, *c.TokensBefore)
	assert.Equal(t, 200, *c.TokensAfter)
	assert.Equal(t, []string{"call-3"}, refIDs(c.ModelCalls))
	assert.Equal(t, []string{"call-1"}, refIDs([]agentobs.ModelCallRef{*c.BeforeModelCall}))
	assert.Equal(t, []string{"call-4"}, refIDs([]agentobs.ModelCallRef{*c.AfterModelCall}))

	s := r.sandboxes[0]
	assert.Equal(t, agentobs.SandboxOutcomeOOM, s.Outcome)
	assert.Equal(t, 64.0, *s.PeakMemoryMiB)
	assert.Equal(t, 1.5, *s.WallTimeS)
}

func TestRecorderBundleInProgress(t *testing.T) {
	clock := newStepClock(time.Millisecond)
	rec, err := agentobs.NewRecorder(nil, "r-1", agentobs.WithClock(clock.now))
	require.NoError(t, err)
	ctx, inv := rec.StartInvocation(t.Context(), "agent")
	_, tool := agentobs.StartToolCall(ctx, "sh", "tc-1")
	_, comp := agentobs.StartCompaction(ctx, "")
	require.NoError(t, agentobs.RecordModelCall(ctx, "call-1"))

	r := split(rec.Bundle())
	require.Len(t, r.invocations, 1)
	got := r.invocations[inv.ID()]
	require.NotNil(t, got, "no-op provider: the recorder makes its own invocation id")
	assert.Len(t, inv.ID(), 16)
	assert.Equal(t, agentobs.InvocationStatusIncomplete, got.Status)
	assert.Nil(t, got.DurationMS)
	assert.Equal(t, []string{"call-1"}, refIDs(got.ModelCalls))
	assert.Equal(t, agentobs.ToolCallStatusIncomplete, r.tools["tc-1"].Status)
	assert.Nil(t, r.tools["tc-1"].CompletedAt)
	assert.Equal(t, agentobs.CompactionOutcomeUnknown, r.compactions[0].Outcome)
	assert.Nil(t, r.compactions[0].ObservedAt)

	tool.End(nil)
	comp.End(agentobs.CompactionResult{Err: context.Canceled})
	inv.End(nil)
	r = split(rec.Bundle())
	assert.Equal(t, agentobs.InvocationStatusCompleted, r.invocations[inv.ID()].Status)
	assert.Equal(t, agentobs.ToolCallStatusCompleted, r.tools["tc-1"].Status)
	assert.Equal(t, agentobs.CompactionOutcomeAborted, r.compactions[0].Outcome)
	assert.ErrorContains(t, agentobs.RecordModelCall(ctx, "call-2"), "ended")
}

func TestEndStatus(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		err      error
		opts     []agentobs.EndOption
		inv      agentobs.InvocationStatus
		tool     agentobs.ToolCallStatus
		errType  string
		spanCode codes.Code
	}{
		{name: "nil", inv: "completed", tool: "completed", spanCode: codes.Unset},
		{name: "plain error", err: boom, inv: "failed", tool: "failed", errType: "_OTHER", spanCode: codes.Error},
		{name: "joined errors", err: errors.Join(errors.New("x"), &fs.PathError{Op: "read", Err: fs.ErrClosed}), inv: "failed", tool: "failed", errType: "_OTHER", spanCode: codes.Error},
		{name: "wrapped path error", err: wrap(&fs.PathError{Op: "read", Err: fs.ErrClosed}), inv: "failed", tool: "failed", errType: "*fs.PathError", spanCode: codes.Error},
		{name: "deadline", err: wrap(context.DeadlineExceeded), inv: "incomplete", tool: "timeout", errType: "timeout", spanCode: codes.Error},
		{name: "canceled", err: context.Canceled, inv: "incomplete", tool: "cancelled", errType: "cancelled", spanCode: codes.Error},
		{name: "explicit", err: boom, opts: []agentobs.EndOption{agentobs.WithErrorType("E42"), agentobs.WithInvocationStatus("unknown"), agentobs.WithToolCallStatus("unknown")},
			inv: "unknown", tool: "unknown", errType: "E42", spanCode: codes.Unset},
		{name: "invalid explicit status ignored", opts: []agentobs.EndOption{agentobs.WithInvocationStatus("bogus"), agentobs.WithToolCallStatus("bogus")},
			inv: "completed", tool: "completed", spanCode: codes.Unset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			rec, err := agentobs.NewRecorder(h.tp, "r-1")
			require.NoError(t, err)
			ctx, inv := rec.StartInvocation(t.Context(), "a")
			_, tool := agentobs.StartToolCall(ctx, "t", "tc-1")
			tool.End(tt.err, tt.opts...)
			inv.End(tt.err, tt.opts...)
			r := split(requireSameBundles(t, h, rec))
			got := r.invocations[inv.ID()]
			assert.Equal(t, tt.inv, got.Status)
			assert.Equal(t, tt.tool, r.tools["tc-1"].Status)
			if tt.errType == "" {
				assert.Nil(t, got.ErrorType)
				assert.Nil(t, r.tools["tc-1"].ErrorType)
			} else {
				assert.Equal(t, tt.errType, str(got.ErrorType))
				assert.Equal(t, tt.errType, str(r.tools["tc-1"].ErrorType))
			}
			for _, s := range h.exp.GetSpans() {
				if s.Name == "execute_tool t" {
					assert.Equal(t, tt.spanCode, s.Status.Code)
				}
			}
		})
	}
}

// wrap hides err behind fmt.Errorf's %w, as callers do.
func wrap(err error) error { return fmt.Errorf("step 3: %w", err) }

func TestRecorderWithoutInvocation(t *testing.T) {
	ctx := t.Context()
	tctx, tool := agentobs.StartToolCall(ctx, "t", "tc")
	assert.Nil(t, tool)
	assert.Equal(t, ctx, tctx)
	tool.End(errors.New("ignored")) // nil-safe
	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	assert.Nil(t, comp)
	assert.Equal(t, ctx, cctx)
	comp.End(agentobs.CompactionResult{})
	var inv *agentobs.Invocation
	inv.End(nil)
	assert.Empty(t, inv.ID())
	assert.Nil(t, agentobs.InvocationFromContext(ctx))
	assert.Error(t, agentobs.RecordModelCall(ctx, "call-1"))
	assert.Error(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{Role: agentobs.SandboxRoleAgent}, time.Now(), time.Now()))
}

func TestNewRecorderErrors(t *testing.T) {
	for _, tt := range []struct {
		name, rid string
		opts      []agentobs.Option
		want      string
		storeErr  bool // the id is not a file name of the store either
	}{
		// One message, one rule (D12's, which refused it), naming the value; the error still
		// matches the store's sentinel.
		{name: "empty id", rid: "", want: `agentobs: recorder: invalid rollout id "": must match ` + rollout.IDPattern, storeErr: true},
		{name: "slash", rid: "a/b", want: `agentobs: recorder: invalid rollout id "a/b": must match ` + rollout.IDPattern, storeErr: true},
		// File names of the store that the writers' id rule (SPEC §0 D12) refuses: refused here,
		// not span by span at write time (from a fresh-user trial).
		{name: "dot dot", rid: "..", want: `invalid rollout id "..": must match ` + rollout.IDPattern},
		{name: "leading underscore", rid: "_unattributed", want: `invalid rollout id "_unattributed": must match`},
		{name: "leading dash", rid: "-x", want: `invalid rollout id "-x": must match`},
		{name: "too long", rid: strings.Repeat("r", rollout.MaxIDBytes+1), want: "longer than 200 bytes (201)"},
		{name: "bad run id", rid: "r", opts: []agentobs.Option{agentobs.WithRunID("../x")}, want: "WithRunID"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agentobs.NewRecorder(nil, tt.rid, tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.storeErr {
				assert.NotContains(t, err.Error(), "Invalid rollout id", "one rule stated, not two")
				assert.Equal(t, 1, strings.Count(err.Error(), "rollout id"), err.Error())
				assert.ErrorIs(t, err, capture.ErrInvalidRolloutID)
				assert.ErrorIs(t, err, rollout.ErrInvalidID)
			}
		})
	}
}

func TestRecorderRunIDAndRolloutContext(t *testing.T) {
	h := newHarness(t, sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)))
	rec, err := agentobs.NewRecorder(h.tp, "r-1", agentobs.WithRunID("run-9"))
	require.NoError(t, err)
	_, inv := rec.StartInvocation(t.Context(), "a")
	inv.End(nil)

	// Started from a rollout root span (proxy.StartRollout), the invocation nests under it.
	rctx, root := proxy.StartRollout(t.Context(), h.tp, "r-1", proxy.WithRolloutRunID("run-9"))
	_, inv2 := rec.StartInvocation(rctx, "b")
	inv2.End(nil)
	root.End()

	spans := h.byName()
	a, b := spans["invoke_agent a"], spans["invoke_agent b"]
	assert.Equal(t, rollout.ID{Run: "run-9", Rollout: "r-1"}.TraceID(), a.SpanContext.TraceID())
	assert.Equal(t, rollout.ID{Run: "run-9", Rollout: "r-1"}.RootSpanID(), a.Parent.SpanID())
	assert.Equal(t, rollout.ID{Run: "run-9", Rollout: "r-1"}.TraceID(), b.SpanContext.TraceID())
	assert.Equal(t, root.SpanContext().SpanID(), b.Parent.SpanID())

	// A span of a foreign trace in ctx becomes a link; the invocation still joins the rollout.
	h2 := newHarness(t)
	foreignCtx, foreign := h2.tp.Tracer("agent").Start(t.Context(), "own work")
	rec2, err := agentobs.NewRecorder(h2.tp, "r-2")
	require.NoError(t, err)
	_, inv3 := rec2.StartInvocation(foreignCtx, "c")
	inv3.End(nil)
	foreign.End()
	c := h2.byName()["invoke_agent c"]
	assert.Equal(t, rollout.ID{Rollout: "r-2"}.TraceID(), c.SpanContext.TraceID())
	require.Len(t, c.Links, 1)
	assert.Equal(t, foreign.SpanContext().SpanID(), c.Links[0].SpanContext.SpanID())
	requireSameBundles(t, h2, rec2)
}

func TestRecordSandboxErrors(t *testing.T) {
	rec, err := agentobs.NewRecorder(nil, "r-1")
	require.NoError(t, err)
	ctx, _ := rec.StartInvocation(t.Context(), "a")
	now := time.Now()
	assert.ErrorContains(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{}, now, now), "role")
	assert.ErrorContains(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{Role: "agent", CPUTimeS: agentobs.Ptr(-1.0)}, now, now), "cpu_time_s")
	assert.ErrorContains(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{Role: "agent"}, now, now.Add(-time.Second)), "before start")
	assert.Empty(t, split(rec.Bundle()).sandboxes)
	require.NoError(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{Role: "agent"}, now, now))
	got := split(rec.Bundle()).sandboxes
	require.Len(t, got, 1)
	assert.Equal(t, agentobs.SandboxOutcomeUnknown, got[0].Outcome)
}
