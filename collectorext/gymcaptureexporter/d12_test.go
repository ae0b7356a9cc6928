package gymcaptureexporter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/gymtrace/gymtrace/capture/capturetest"

	"github.com/gymtrace/gymtrace/rollout"
)

// A model-call span whose rollout id fails the D12 rule is rejected permanently: no record, no
// marker; the other spans of the batch are written.
func TestPushTracesRefusesD12IDs(t *testing.T) {
	c := capturetest.Cases(t)[0]
	good := inRollout(c, "good", 1)
	for _, rid := range []string{".hidden", "-lead", strings.Repeat("r", rollout.MaxIDBytes+1)} {
		t.Run(rid[:min(len(rid), 10)], func(t *testing.T) {
			e, dir, _ := newStarted(t, nil)
			err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{inRollout(c, rid, 2), good}))
			require.ErrorIs(t, err, rollout.ErrInvalidID)
			assert.True(t, consumererror.IsPermanent(err))
			assert.Equal(t, map[string]string{"good.capture.jsonl": c.Want(good.TraceID, good.SpanID)}, capturetest.DirContents(t, dir))
		})
	}
}
