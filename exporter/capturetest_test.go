package exporter_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

// TestCaptureConformance runs the capture conformance suite against the SDK span exporter; the
// Collector exporter gymcapture runs the same suite (collectorext).
func TestCaptureConformance(t *testing.T) {
	capturetest.Run(t, func(t *testing.T, dir string) capturetest.Target {
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		exp, err := exporter.New(store, exporter.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })
		return capturetest.TargetFunc(func(ctx context.Context, spans []capturetest.Span) error {
			return exp.ExportSpans(ctx, capturetest.ReadOnlySpans(spans))
		})
	})
}

// TestDurableProcessorConformance runs the suite through the durable span processor the capture
// middleware uses: every span goes through OnEnd. OnEnd returns nothing, so a batch's error is the
// text of the records the processor logged as not written during it (batches run one at a time,
// except in the concurrency scenario, which expects none).
func TestDurableProcessorConformance(t *testing.T) {
	capturetest.Run(t, func(t *testing.T, dir string) capturetest.Target {
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		logs := &syncbuf.Buffer{}
		p, err := exporter.NewDurableProcessor(store, exporter.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
		return capturetest.TargetFunc(func(_ context.Context, spans []capturetest.Span) error {
			before := len(logs.String())
			for _, s := range capturetest.ReadOnlySpans(spans) {
				p.OnEnd(s)
			}
			if logged := logs.String()[before:]; strings.Contains(logged, "record not written") {
				return errors.New(logged)
			}
			return nil
		})
	})
}
