package agentobs

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values not made by their constructors record nothing and never panic (from a fresh-user trial of
// the library: each of these panicked with a nil pointer dereference).
func TestZeroValuesRecordNothing(t *testing.T) {
	ctx := t.Context()
	for name, r := range map[string]*Recorder{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			got, inv := r.StartInvocation(ctx, "agent")
			assert.Equal(t, ctx, got)
			assert.Nil(t, inv)
			assert.Empty(t, r.RolloutID())
			assert.Empty(t, r.Bundle().Records)
		})
	}
	(&Invocation{}).End(nil)
	assert.Empty(t, (&Invocation{}).ID())
	(&ToolCall{}).End(nil)
	(&Compaction{}).End(CompactionResult{})

	for name, p := range map[string]*ObservationProcessor{"nil": nil, "zero": {}} {
		t.Run("processor "+name, func(t *testing.T) {
			p.OnStart(ctx, nil)
			p.OnEnd(nil)
			require.NoError(t, p.ForceFlush(ctx))
			require.NoError(t, p.Shutdown(ctx))
			done, cancel := context.WithCancel(ctx)
			cancel()
			assert.ErrorIs(t, p.ForceFlush(done), context.Canceled)
		})
	}
}
