package gymcaptureexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/rollout"
)

// longDir returns a directory below t.TempDir() whose path is n bytes long (components of at
// most 250 bytes), so that a capture file name in it can exceed PATH_MAX (4096 on Linux) while
// the directory itself can be created.
func longDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for len(dir) < n {
		dir = filepath.Join(dir, strings.Repeat("d", min(250, n-len(dir)-1)))
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.Len(t, dir, n)
	return dir
}

// #14 finding 3: a span whose file name can never be written, in a batch with a good span, through
// exporterhelper with its default retry policy on (first retry after 5 s, retries for 5 min): the
// push is answered at once with a permanent error, exporterhelper never retries it, and the good
// span's record is written once (one push: every count is 1).
func TestPermanentFileNameErrorsAreNotRetried(t *testing.T) {
	c := capturetest.Cases(t)[0]
	for _, tt := range []struct {
		name    string
		dir     func(t *testing.T) string
		badID   string
		wantErr error
	}{
		// The attack: a 242-byte id gave ENAMETOOLONG before SPEC §0 D12; now the id rule refuses it.
		{"242-byte rollout id", func(t *testing.T) string { return t.TempDir() }, strings.Repeat("r", 242), rollout.ErrInvalidID},
		// An id within D12 whose path is still too long: the capture directory takes 4000 of
		// PATH_MAX's 4096 bytes, the 150-byte id's file name the rest.
		{"file name over PATH_MAX", func(t *testing.T) string { return longDir(t, 4000) }, strings.Repeat("p", 150), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.CaptureDir = tt.dir(t)
			cfg.RetryConfig = configretry.NewDefaultBackOffConfig()
			require.True(t, cfg.RetryConfig.Enabled)
			set := meteredSettings(t)
			e, err := newCaptureExporter(cfg, set)
			require.NoError(t, err)
			exp, err := newTraces(t.Context(), set, cfg, e)
			require.NoError(t, err)
			require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
			defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

			bad, good := inRollout(c, tt.badID, 1), inRollout(c, "good", 2)
			// A regression retries: the deadline ends it within seconds instead of 5 minutes.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			start := time.Now()
			err = exp.ConsumeTraces(ctx, toTraces([]capturetest.Span{bad, good}))
			took := time.Since(start)
			require.Error(t, err)
			assert.True(t, consumererror.IsPermanent(err), "a file name that cannot be written is permanent: %v", err)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				assert.ErrorContains(t, err, "file name too long")
			}
			assert.Less(t, took, 2*time.Second, "answered before exporterhelper's first retry (5 s)")

			assert.Equal(t, map[string]int64{"model_call/written": 1, "model_call/rejected": 1, "observation/ignored": 2},
				capturetest.Counts(t, e.meterProvider.(*meteredProvider).reader), "one push, no retry")
			files := capturetest.DirContents(t, cfg.CaptureDir)
			assert.Equal(t, c.Want(good.TraceID, good.SpanID), files["good.capture.jsonl"], "the good record, once")
			assert.NotContains(t, files, tt.badID+".capture.jsonl")
		})
	}
}
