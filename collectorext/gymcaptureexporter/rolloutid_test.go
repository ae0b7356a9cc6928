package gymcaptureexporter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/gymtrace/gymtrace/capture/capturetest"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// One id rule at every entry point (SPEC §0 D12): ids the proxy refuses are refused here, and
// ids that are no file names keep the store's message.
func TestCheckRolloutID(t *testing.T) {
	for _, id := range []string{"3-1", "s7.0-0-a1", strings.Repeat("a", rollout.MaxIDBytes)} {
		require.NoError(t, checkRolloutID(id), id)
	}
	for _, id := range []string{".hidden", "-x", "_x", "..", strings.Repeat("a", rollout.MaxIDBytes+1)} {
		err := checkRolloutID(id)
		require.ErrorIs(t, err, rollout.ErrInvalidID, id)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", id), id)
	}
	for _, id := range []string{"", "a/b", "../escape", "a b"} {
		err := checkRolloutID(id)
		require.ErrorIs(t, err, capture.ErrInvalidRolloutID, id)
		assert.Contains(t, err.Error(), "Invalid rollout id: ", id)
	}
}

// A model-call span whose rollout id fails the D12 rule is rejected permanently: no record, no
// marker; the other spans of the batch are written.
func TestPushTracesRefusesD12IDs(t *testing.T) {
	c := capturetest.Cases(t)[0]
	good := inRollout(c, "good", 1)
	for _, rid := range []string{".hidden", "-lead", strings.Repeat("r", rollout.MaxIDBytes+1)} {
		t.Run(rid[:min(len(rid), 10)], func(t *testing.T) {
			e, dir := newStarted(t, nil)
			err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{inRollout(c, rid, 2), good}))
			require.ErrorIs(t, err, rollout.ErrInvalidID)
			assert.True(t, consumererror.IsPermanent(err))
			assert.Equal(t, map[string]string{"good.capture.jsonl": c.Want(good.TraceID, good.SpanID)}, capturetest.DirContents(t, dir))
		})
	}
}
