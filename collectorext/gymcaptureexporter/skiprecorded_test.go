package gymcaptureexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/semconv"
)

// A model-call span its emitter recorded itself (gymtrace.capture.recorded = true, a proxy with its
// own capture directory, issue #16 part 1) is skipped by default: the file is never touched, the
// batch's other spans are written; with skip_recorded false it is written like any other.
func TestPushTracesSkipsRecordedSpans(t *testing.T) {
	c := capturetest.Cases(t)[0]
	recorded := inRollout(c, "recorded", 1)
	recorded.Attributes = append(recorded.Attributes, semconv.GymtraceCaptureRecordedKey.Bool(true))
	notRecorded := inRollout(c, "false-flag", 2)
	notRecorded.Attributes = append(notRecorded.Attributes, semconv.GymtraceCaptureRecordedKey.Bool(false))
	wrongType := inRollout(c, "string-flag", 3)
	wrongType.Attributes = append(wrongType.Attributes, attribute.String(string(semconv.GymtraceCaptureRecordedKey), "true"))
	plain := inRollout(c, "plain", 4)
	batch := []capturetest.Span{recorded, notRecorded, wrongType, plain}

	e, dir, _ := newStarted(t, nil)
	require.NoError(t, e.pushTraces(t.Context(), toTraces(batch)))
	assert.Equal(t, map[string]string{
		"false-flag.capture.jsonl":  c.Want(notRecorded.TraceID, notRecorded.SpanID),
		"string-flag.capture.jsonl": c.Want(wrongType.TraceID, wrongType.SpanID),
		"plain.capture.jsonl":       c.Want(plain.TraceID, plain.SpanID),
	}, capturetest.DirContents(t, dir), "only a boolean true skips")

	e, dir, _ = newStarted(t, func(cfg *Config, _ *captureExporter) { cfg.SkipRecorded = false })
	require.NoError(t, e.pushTraces(t.Context(), toTraces(batch)))
	assert.Len(t, capturetest.DirContents(t, dir), 4)
	assert.Equal(t, c.Want(recorded.TraceID, recorded.SpanID), capturetest.DirContents(t, dir)["recorded.capture.jsonl"])
}
