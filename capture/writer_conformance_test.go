package capture_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// TestWriterConformance runs the capture conformance suite against the span writer itself; every
// adapter (exporter, collectorext) runs it too.
func TestWriterConformance(t *testing.T) {
	capturetest.Run(t, func(t *testing.T, dir string) capturetest.Target {
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		w, err := capture.NewWriter(store, capture.ModelCallLines{})
		require.NoError(t, err)
		return capturetest.TargetFunc(func(ctx context.Context, spans []capturetest.Span) error {
			var errs []error
			for _, s := range spans {
				v := capture.Span{
					TraceID: s.TraceID, SpanID: s.SpanID, Name: s.Name, Kind: s.Kind,
					StartTime: s.Start, EndTime: s.End, Attributes: capture.Attributes(s.Attributes),
					DroppedAttributes: s.DroppedAttributes,
				}
				if r := w.Write(ctx, &v); r.Outcome >= capture.OutcomeRejected {
					errs = append(errs, r.Err)
				}
			}
			return errors.Join(errs...)
		})
	})
}
