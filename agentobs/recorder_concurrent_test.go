package agentobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
)

// TestRecorderConcurrentSafe records many tool calls, model calls and subagents of one invocation
// from many goroutines at once (run it with -race), while others read the bundle, and ends the
// invocation while late calls race with it.
func TestRecorderConcurrentSafe(t *testing.T) {
	const goroutines, perGoroutine = 16, 12
	// Default span limits: 128 events, so the invocation's events overflow; the ids list keeps
	// every reference.
	h := newHarness(t)
	rec, err := agentobs.NewRecorder(h.tp, "r-1")
	require.NoError(t, err)
	ctx, inv := rec.StartInvocation(t.Context(), "root")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := rec.Bundle().Validate(); err != nil {
					t.Errorf("bundle in progress is invalid: %v", err)
					return
				}
			}
		}()
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perGoroutine {
				id := fmt.Sprintf("g%d-%d", g, i)
				tctx, tool := agentobs.StartToolCall(ctx, "sh", "tc-"+id)
				assert.NoError(t, agentobs.RecordModelCall(tctx, "call-"+id))
				if i%4 == 0 {
					sctx, sub := rec.StartInvocation(tctx, "sub")
					assert.NoError(t, agentobs.RecordModelCall(sctx, "sub-"+id))
					sub.End(nil)
				}
				if i%3 == 0 {
					tool.End(errors.New("exit 1"))
				} else {
					tool.End(nil)
				}
			}
		}()
	}
	wg.Wait()

	// Late calls race with End: each is either recorded or refused, never half.
	var late sync.WaitGroup
	var mu sync.Mutex
	accepted := map[string]bool{}
	for i := range 8 {
		late.Add(1)
		go func() {
			defer late.Done()
			id := fmt.Sprintf("late-%d", i)
			if agentobs.RecordModelCall(ctx, id) == nil {
				mu.Lock()
				accepted[id] = true
				mu.Unlock()
			}
		}()
	}
	inv.End(nil)
	late.Wait()
	close(stop)
	readers.Wait()

	b := requireSameBundles(t, h, rec)
	r := split(b)
	assert.Len(t, r.tools, goroutines*perGoroutine)
	assert.Len(t, r.invocations, 1+goroutines*((perGoroutine+3)/4))
	root := r.invocations[inv.ID()]
	got := map[string]bool{}
	for _, id := range refIDs(root.ModelCalls) {
		assert.False(t, got[id], "reference %s once", id)
		got[id] = true
	}
	assert.Len(t, got, goroutines*perGoroutine+len(accepted))
	for id := range accepted {
		assert.True(t, got[id], id)
	}
	failed := 0
	for _, tc := range r.tools {
		assert.Equal(t, inv.ID(), tc.InvocationID)
		if tc.Status == agentobs.ToolCallStatusFailed {
			failed++
		}
	}
	assert.Equal(t, goroutines*((perGoroutine+2)/3), failed)
	for id, sub := range r.invocations {
		if id != inv.ID() {
			assert.Equal(t, inv.ID(), str(sub.ParentInvocationID))
			assert.NotNil(t, sub.SpawnedByToolCallID)
		}
	}
	assert.Empty(t, b.Gaps)
	rootSpan := h.byName()["invoke_agent root"]
	assert.Positive(t, rootSpan.DroppedEvents, "the span lost events to its limit; the bundle did not")
	counts := h.counts()
	assert.Equal(t, int64(1), counts["observation/partial"], "the root's line is written without the events it lost, as partial")
	assert.Equal(t, int64(len(h.exp.GetSpans())-1), counts["observation/written"])
}

func BenchmarkRecordToolCall(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rec, err := agentobs.NewRecorder(tp, "r-1")
	require.NoError(b, err)
	ctx, inv := rec.StartInvocation(context.Background(), "root")
	defer inv.End(nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tctx, tool := agentobs.StartToolCall(ctx, "sh", "tc")
		_ = agentobs.RecordModelCall(tctx, "call")
		tool.End(nil)
	}
}
