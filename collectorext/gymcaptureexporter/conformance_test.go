package gymcaptureexporter

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	colexporter "go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
	"github.com/gymtrace/gymtrace/exporter"
)

// newFactoryTarget builds gymcapture through its factory with the default configuration over dir
// (queue disabled, retries enabled), starts it, and shuts it down when t ends.
func newFactoryTarget(t *testing.T, dir string) capturetest.Target {
	return newFactoryTargetWith(t, dir, "")
}

// newJournalTarget is newFactoryTarget with durability "journal" (SPEC §0 D17).
func newJournalTarget(t *testing.T, dir string) capturetest.Target {
	return newFactoryTargetWith(t, dir, "journal")
}

func newFactoryTargetWith(t *testing.T, dir, durability string) capturetest.Target {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.CaptureDir = dir
	if durability != "" {
		cfg.Durability = durability
	}
	require.NoError(t, cfg.Validate())
	exp, err := f.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })
	return exporterTarget{exp}
}

// exporterTarget pushes the suite's spans to a started gymcapture as one ConsumeTraces each; Flush
// (capturetest.Flusher) is its Shutdown, which writes the held observation spans (SPEC §0 D18).
type exporterTarget struct{ exp colexporter.Traces }

func (e exporterTarget) ConsumeSpans(ctx context.Context, spans []capturetest.Span) error {
	return e.exp.ConsumeTraces(ctx, toTraces(spans))
}

func (e exporterTarget) Flush(ctx context.Context) error { return e.exp.Shutdown(ctx) }

// TestCaptureConformance runs the capture conformance suite against gymcapture; the SDK exporter
// runs the same suite (exporter/capturetest_test.go) against the same golden lines.
func TestCaptureConformance(t *testing.T) {
	capturetest.Run(t, newFactoryTarget)
}

// TestCaptureConformanceJournal runs the same suite with the journal: the same files, lines and
// markers.
func TestCaptureConformanceJournal(t *testing.T) {
	capturetest.Run(t, newJournalTarget)
}

// TestStartRecoversJournals: Start replays the journal a crashed writer left (SPEC §0 D17) before
// the first push, in either mode, and removes it.
func TestStartRecoversJournals(t *testing.T) {
	for _, d := range []string{"", "journal"} {
		dir := t.TempDir()
		line := `{"model_call_id":"00000000000000000000000000000001","v":1}` + "\n"
		owner := capturetest.WriteDeadJournal(t, dir, "r1"+capture.CaptureFileSuffix, line, line)
		newFactoryTargetWith(t, dir, d)
		assert.Equal(t, map[string]string{"r1" + capture.CaptureFileSuffix: line}, capturetest.DirContents(t, dir), "durability %q: the record once", d)
		assert.NoDirExists(t, owner)
	}
}

// TestObservationConformance runs the observation-line conformance suite against gymcapture with
// observations enabled (the default configuration); the SDK's agentobs.ObservationProcessor runs
// the same suite (agentobs/conformance_test.go) against the same lines.
func TestObservationConformance(t *testing.T) {
	capturetest.RunObservations(t, newFactoryTarget)
}

// newSDKTarget is the SDK span exporter over dir, fed the same spans as sdktrace.ReadOnlySpans.
func newSDKTarget(t *testing.T, dir string) capturetest.Target {
	t.Helper()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	exp, err := exporter.New(store, exporter.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })
	return capturetest.TargetFunc(func(ctx context.Context, spans []capturetest.Span) error {
		return exp.ExportSpans(ctx, capturetest.ReadOnlySpans(spans))
	})
}

// TestIdenticalToSDKExporter feeds the SDK exporter and gymcapture the same spans and compares
// their capture directories byte for byte: every canonical span, in per-case rollouts and all in
// one rollout (twice: the second time appends nothing), plus one that lost attributes to a count
// limit.
func TestIdenticalToSDKExporter(t *testing.T) {
	cases := capturetest.Cases(t)
	var batches [][]capturetest.Span
	var all []capturetest.Span
	inRollout := func(s capturetest.Span, rid string) capturetest.Span {
		s.Attributes = append(s.Attributes[:0:0], s.Attributes...)
		for j, kv := range s.Attributes {
			if kv.Key == "gymtrace.rollout.id" {
				s.Attributes[j] = kv.Key.String(rid)
			}
		}
		return s
	}
	for i, c := range cases {
		batches = append(batches, []capturetest.Span{inRollout(c.Span, fmt.Sprintf("case-%d", i))})
		all = append(all, c.Span)
	}
	dropped := inRollout(cases[0].Span, "dropped")
	dropped.DroppedAttributes = 3
	batches = append(batches, all, []capturetest.Span{dropped}, all)

	sdkDir, colDir := t.TempDir(), t.TempDir()
	sdkT, col := newSDKTarget(t, sdkDir), newFactoryTarget(t, colDir)
	for _, b := range batches {
		require.NoError(t, sdkT.ConsumeSpans(t.Context(), b))
		require.NoError(t, col.ConsumeSpans(t.Context(), b))
	}
	want := capturetest.DirContents(t, sdkDir)
	require.Len(t, want, len(cases)+3, "one file per case rollout, the shared rollout's file (each call once), the dropped span's file and its marker")
	assert.Equal(t, want, capturetest.DirContents(t, colDir))
}
