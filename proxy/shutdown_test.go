package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
	"github.com/gymtrace/gymtrace/semconv"
)

// shutdownHarness is a capture handler over next served on 127.0.0.1, with metrics and logs, whose
// store is read back through a second Store on the same directory.
type shutdownHarness struct {
	h      *Handler
	srv    *httptest.Server
	reader *sdkmetric.ManualReader
	store  *capture.Store // reads the handler's directory
	logs   *syncbuf.Buffer
}

// newShutdownHarness builds the handler with WithCaptureDir (ownStore) or WithStore.
func newShutdownHarness(t *testing.T, next http.Handler, ownStore bool, opts ...Option) *shutdownHarness {
	t.Helper()
	mp, reader := newMetricReader(t)
	store := newTestStore(t)
	sh := &shutdownHarness{reader: reader, store: store, logs: &syncbuf.Buffer{}}
	all := []Option{WithModelServerName("policy_model"), WithMeterProvider(mp), WithLogger(newTextLogger(sh.logs))}
	if ownStore {
		all = append(all, WithCaptureDir(store.Dir()))
	} else {
		all = append(all, WithStore(store))
	}
	h, err := CaptureHandler(next, append(all, opts...)...)
	require.NoError(t, err)
	sh.h, sh.srv = h, httptest.NewServer(h)
	t.Cleanup(sh.srv.Close)
	return sh
}

// post sends body to the rollout's responses endpoint and returns the status and the body read.
func (sh *shutdownHarness) post(t *testing.T, rid string, body io.Reader) (int, string, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sh.srv.URL+"/ng-rollout/"+rid+"/v1/responses", body)
	if err != nil {
		return 0, "", err
	}
	resp, err := sh.srv.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// state is what a reader of the capture directory and of the metrics sees for rollout rid.
func (sh *shutdownHarness) state(t *testing.T, rid string) (marked bool, records int) {
	t.Helper()
	marked, err := sh.store.IsIncomplete(rid)
	require.NoError(t, err)
	lines, _, err := sh.store.ReadAvailable(rid)
	require.NoError(t, err)
	return marked, len(lines)
}

// counted reports whether gymtrace.capture.calls has a data point.
func (sh *shutdownHarness) counted(t *testing.T) bool {
	t.Helper()
	_, ok := collect(t, sh.reader)[semconv.GymtraceCaptureCallsName]
	return ok
}

func TestCaptureHandlerShutdownAbandonsInFlight(t *testing.T) {
	const answer = `{"id":"resp_1","object":"response","output":[]}`
	tests := []struct {
		name     string
		rollouts []string // one call blocked in the model server per entry
		ownStore bool     // WithCaptureDir (the fresh-user setup) instead of WithStore
		wantErr  string
	}{
		{name: "one call, WithCaptureDir", rollouts: []string{"late"}, ownStore: true,
			wantErr: "proxy capture handler shutdown: context deadline exceeded: 1 captured call was still in flight: its record will not be written and its rollout was marked incomplete; not every span processor was shut down"},
		{name: "one call, WithStore", rollouts: []string{"late"},
			wantErr: "proxy capture handler shutdown: context deadline exceeded: 1 captured call was still in flight: its record will not be written and its rollout was marked incomplete; not every span processor was shut down"},
		{name: "two rollouts", rollouts: []string{"a-1", "b-2"},
			wantErr: "proxy capture handler shutdown: context deadline exceeded: 2 captured calls were still in flight: their records will not be written and their rollouts were marked incomplete; not every span processor was shut down"},
		{name: "two calls of one rollout", rollouts: []string{"same", "same"},
			wantErr: "proxy capture handler shutdown: context deadline exceeded: 2 captured calls were still in flight: their records will not be written and their rollouts were marked incomplete; not every span processor was shut down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			entered := make(chan struct{}, len(tt.rollouts))
			sh := newShutdownHarness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				<-release
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, answer)
			}), tt.ownStore)
			type answered struct {
				status int
				body   string
				err    error
			}
			done := make(chan answered, len(tt.rollouts))
			for _, rid := range tt.rollouts {
				go func() {
					st, b, err := sh.post(t, rid, strings.NewReader(`{"model":"m","input":"hi"}`))
					done <- answered{st, b, err}
				}()
			}
			for range tt.rollouts {
				<-entered
			}

			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			err := sh.h.Shutdown(ctx)
			require.Error(t, err)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, tt.wantErr, err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), context.DeadlineExceeded.Error()), "the ctx error once")

			// What a process that exits now leaves behind: every rollout marked, every call counted lost.
			for _, rid := range tt.rollouts {
				marked, records := sh.state(t, rid)
				assert.True(t, marked, "rollout %s marked before Shutdown returned", rid)
				assert.Zero(t, records)
			}
			assert.EqualValues(t, len(tt.rollouts), writeFailures(t, sh.reader), "each abandoned call is a record not written")
			assert.False(t, sh.counted(t), "an abandoned call is no captured call")

			// The calls go on and are answered; what they do later keeps the picture.
			close(release)
			for range tt.rollouts {
				a := <-done
				require.NoError(t, a.err)
				assert.Equal(t, http.StatusOK, a.status)
				assert.Equal(t, answer, a.body)
			}
			for _, rid := range tt.rollouts {
				marked, records := sh.state(t, rid)
				assert.True(t, marked, "the marker stays")
				assert.Zero(t, records, "a call abandoned by Shutdown never writes its record")
			}
			assert.EqualValues(t, len(tt.rollouts), writeFailures(t, sh.reader), "counted once")
			assert.False(t, sh.counted(t))
			assert.Contains(t, sh.logs.String(), "call ended after shutdown")
			assert.Equal(t, err, sh.h.Shutdown(t.Context()), "later calls return the first result")
		})
	}
}

// A call still reading its request body when Shutdown stops waiting has no span yet: its rollout
// is marked at once, and it is counted lost when it ends.
func TestCaptureHandlerShutdownAbandonsCallBeforeItsSpan(t *testing.T) {
	sh := newShutdownHarness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1"}`)
	}), true)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, _, err := sh.post(t, "slow-body", pr)
		done <- err
	}()
	_, err := io.WriteString(pw, `{"model":"m",`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		sh.h.inflight.mu.Lock()
		defer sh.h.inflight.mu.Unlock()
		return len(sh.h.inflight.calls) == 1
	}, 5*time.Second, 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err = sh.h.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "1 captured call was still in flight")
	marked, records := sh.state(t, "slow-body")
	assert.True(t, marked)
	assert.Zero(t, records)
	assert.Zero(t, writeFailures(t, sh.reader), "no span yet: nothing handed to the writer")

	_, err = io.WriteString(pw, `"input":"hi"}`)
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.NoError(t, <-done)
	marked, records = sh.state(t, "slow-body")
	assert.True(t, marked)
	assert.Zero(t, records)
	assert.EqualValues(t, 1, writeFailures(t, sh.reader), "counted when its span ended")
	assert.False(t, sh.counted(t))
}

// blockingOnEnd is a span processor whose OnEnd waits for release.
type blockingOnEnd struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (p *blockingOnEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p *blockingOnEnd) OnEnd(sdktrace.ReadOnlySpan) {
	p.once.Do(func() { close(p.entered) })
	<-p.release
}
func (p *blockingOnEnd) Shutdown(context.Context) error   { return nil }
func (p *blockingOnEnd) ForceFlush(context.Context) error { return nil }

// A call whose record is already written when Shutdown stops waiting (its span is ending) is not
// abandoned: its rollout is not marked and it counts as written.
func TestCaptureHandlerShutdownKeepsRecordedCall(t *testing.T) {
	p := &blockingOnEnd{entered: make(chan struct{}), release: make(chan struct{})}
	sh := newShutdownHarness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1"}`)
	}), false, WithSpanProcessor(p))
	done := make(chan error, 1)
	go func() {
		_, _, err := sh.post(t, "recorded", strings.NewReader(`{}`))
		done <- err
	}()
	<-p.entered // the durable processor wrote the record; the span is still ending
	marked, records := sh.state(t, "recorded")
	require.False(t, marked)
	require.Equal(t, 1, records)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- sh.h.Shutdown(ctx) }()
	<-ctx.Done()
	close(p.release)
	err := <-shut
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "proxy capture handler shutdown: context deadline exceeded: the calls still in flight were past their records (every record was written); not every span processor was shut down", err.Error())
	require.NoError(t, <-done)
	marked, records = sh.state(t, "recorded")
	assert.False(t, marked, "a written record marks nothing")
	assert.Equal(t, 1, records)
	assert.Zero(t, writeFailures(t, sh.reader))
	assert.True(t, sh.counted(t), "a recorded call is counted")
}
