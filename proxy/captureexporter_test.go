package proxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// gatedCollector stands in for a capture Collector: ExportSpans waits for release (or fails with
// err) and keeps what it acknowledged.
type gatedCollector struct {
	release chan struct{}
	err     error
	mu      sync.Mutex
	got     []sdktrace.ReadOnlySpan
}

func (c *gatedCollector) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	select {
	case <-c.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.err != nil {
		return c.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, spans...)
	return nil
}

func (c *gatedCollector) Shutdown(context.Context) error { return nil }

func (c *gatedCollector) acknowledged() []sdktrace.ReadOnlySpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdktrace.ReadOnlySpan(nil), c.got...)
}

// TestCaptureHandlerCaptureExporter: with WithCaptureExporter the call's end waits for the
// collector's acknowledgement, records never reach the local store, and a failed export marks the
// rollout incomplete while the client still gets its whole response.
func TestCaptureHandlerCaptureExporter(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`))
	})
	t.Run("acknowledged before the end is released", func(t *testing.T) {
		col := &gatedCollector{release: make(chan struct{})}
		env := newCaptureEnv(t, upstream, nil, WithCaptureExporter(col, 5*time.Second))
		done := make(chan []byte, 1)
		go func() {
			_, body, _ := env.post(t, "/ng-rollout/r1/v1/chat/completions", `{"model":"m"}`, nil)
			done <- body
		}()
		select {
		case <-done:
			t.Fatal("the call ended before the collector acknowledged its record")
		case <-time.After(200 * time.Millisecond):
		}
		close(col.release)
		body := <-done
		assert.Contains(t, string(body), `"content":"hi"`)
		got := col.acknowledged()
		require.Len(t, got, 1)
		assert.Equal(t, "chat m", got[0].Name())
		var rid string
		for _, kv := range got[0].Attributes() {
			if kv.Key == semconv.GymtraceRolloutIDKey {
				rid = kv.Value.AsString()
			}
			assert.NotEqual(t, semconv.GymtraceCaptureRecordedKey, kv.Key,
				"the gateway writes this record: the span must not say it is recorded already")
		}
		assert.Equal(t, "r1", rid)
		recs, _ := env.records(t, "r1")
		assert.Empty(t, recs, "the collector writes the records, not the local store")
		incomplete, err := env.store.IsIncomplete("r1")
		require.NoError(t, err)
		assert.False(t, incomplete)
	})
	t.Run("refused export marks the rollout incomplete", func(t *testing.T) {
		col := &gatedCollector{release: make(chan struct{}), err: errors.New("collector unavailable")}
		close(col.release)
		mp, reader := newMetricReader(t)
		env := newCaptureEnv(t, upstream, nil, WithCaptureExporter(col, 5*time.Second), WithMeterProvider(mp))
		resp, body, err := env.post(t, "/ng-rollout/r2/v1/chat/completions", `{"model":"m"}`, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, string(body), `"content":"hi"`, "the client still gets its response")
		incomplete, err := env.store.IsIncomplete("r2")
		require.NoError(t, err)
		assert.True(t, incomplete)
		assert.Contains(t, env.logs.String(), "collector unavailable")
		metricdatatest.AssertEqual(t, writerSpans(map[string]int64{"failed": 1}), collect(t, reader)[semconv.GymtraceCaptureWriterSpansName],
			metricdatatest.IgnoreTimestamp())
	})
}
