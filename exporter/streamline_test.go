package exporter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file checks the streamed path of the record writer: a record whose payloads reach
// capture.StreamedLineBytes goes to the local store in pieces (capture.Store.AppendStream) and must give
// exactly the line capture.AppendLineFromAttributes gives.

// bigSSE returns an SSE text of at least size bytes: quotes, newlines, multibyte text, a control
// character and ill-formed UTF-8 in every event.
func bigSSE(size int) string {
	const event = "data: {\"choices\":[{\"delta\":{\"content\":\"Grüß 東京 🙂 \\\"q\\\"\x01\xff\"}}]}\n\n"
	return strings.Repeat(event, size/len(event)+1) + "data: [DONE]\n\n"
}

// bigObject returns a compact strict JSON object of at least size bytes.
func bigObject(size int) string {
	var b strings.Builder
	b.WriteString(`{"model":"policy","stream":true,"messages":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"turn %d: Grüß 東京 \"quoted\"\n\u00e9 \ud83d\ude42"}`, i)
	}
	b.WriteString(`],"temperature":1.50}`)
	return b.String()
}

// withPayload returns a copy of stub whose payload attribute k is value with size attribute size
// (size < 0: the value's length).
func withPayload(stub tracetest.SpanStub, k attribute.Key, value string, size int) tracetest.SpanStub {
	sk, _ := semconv.PayloadSizeKey(k)
	if size < 0 {
		size = len(value)
	}
	attrs := make([]attribute.KeyValue, 0, len(stub.Attributes)+2)
	for _, kv := range stub.Attributes {
		if kv.Key != k && kv.Key != sk {
			attrs = append(attrs, kv)
		}
	}
	stub.Attributes = append(attrs, k.String(value), sk.Int(size))
	return stub
}

// attrLine returns the line and problems capture.AppendLineFromAttributes gives for stub's span,
// and the span's SpanLine.
func attrLine(t *testing.T, stub tracetest.SpanStub) (string, capture.Problems, *capture.SpanLine) {
	t.Helper()
	sc := stub.SpanContext
	line, problems, err := capture.AppendLineFromAttributes(nil, capture.Attributes(stub.Attributes), stub.StartTime, stub.EndTime,
		sc.TraceID().String(), sc.SpanID().String())
	require.NoError(t, err)
	v := sdkspan.FromReadOnly(stub.Snapshot())
	l, err := capture.ModelCallLines{}.NewLine("", &v)
	require.NoError(t, err)
	return string(line), problems, l.(*capture.SpanLine)
}

// sizeRecorder is a write hook that records the commit sizes it is asked about.
type sizeRecorder struct {
	mu    sync.Mutex
	sizes []int
}

func (r *sizeRecorder) hook(_ string, size int) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sizes = append(r.sizes, size)
	return 0, nil
}

func (r *sizeRecorder) get() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.sizes...)
}

func TestStreamedRecordIsTheAttributeLine(t *testing.T) {
	base := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	rawEx := *base
	rawEx.ResponseRaw = strp(bigSSE(300 << 10))
	reqEx := *base
	reqEx.Request = []byte(bigObject(300 << 10))
	var spaced bytes.Buffer
	require.NoError(t, json.Indent(&spaced, reqEx.Request, "", "  "))
	hugeEx := *base
	hugeEx.RequestRaw = strp(bigSSE(200 << 10))
	hugeEx.ResponseRaw = strp(bigSSE(1536 << 10))
	cutEx := rawEx
	cutEx.Request = nil
	nullRespEx := rawEx
	nullRespEx.Response = nil
	truncated := bigObject(300 << 10)
	truncated = truncated[:len(truncated)-1] // valid up to its missing closing brace
	// Just below and at the threshold: the payloads total capture.StreamedLineBytes-1 and capture.StreamedLineBytes.
	others := len(base.Request) + len(base.Response)
	belowEx, atEx := *base, *base
	belowEx.ResponseRaw = strp(strings.Repeat("a\"", capture.StreamedLineBytes)[:capture.StreamedLineBytes-1-others])
	atEx.ResponseRaw = strp(strings.Repeat("a\"", capture.StreamedLineBytes)[:capture.StreamedLineBytes-others])

	tests := []struct {
		name           string
		stub           tracetest.SpanStub
		want           string // the line, besides AppendLineFromAttributes's; "" = only that
		wantPayload    int    // PayloadBytes, when set
		wantStreamed   bool
		wantProblems   int
		wantIncomplete bool
	}{
		{name: "300 KiB response_raw", stub: modelCallStub("r1", &rawEx, 1), want: wantLine(&rawEx, 1), wantStreamed: true},
		{name: "300 KiB request body", stub: modelCallStub("r1", &reqEx, 2), want: wantLine(&reqEx, 2), wantStreamed: true},
		{name: "300 KiB request body, not compact", stub: withPayload(modelCallStub("r1", &reqEx, 3), semconv.GymtraceRequestBodyKey, spaced.String(), -1),
			want: wantLine(&reqEx, 3), wantStreamed: true},
		{name: "200 KiB request_raw and 1.5 MiB response_raw", stub: modelCallStub("r1", &hugeEx, 4), want: wantLine(&hugeEx, 4), wantStreamed: true},
		{name: "cut request body beside a large response_raw", stub: withPayload(modelCallStub("r1", &rawEx, 5), semconv.GymtraceRequestBodyKey, `{"model":"pol`, len(rawEx.Request)),
			want: wantLine(&cutEx, 5), wantStreamed: true, wantProblems: 1, wantIncomplete: true},
		{name: "invalid 300 KiB response body", stub: withPayload(modelCallStub("r1", &rawEx, 6), semconv.GymtraceResponseBodyKey, truncated, -1),
			want: wantLine(&nullRespEx, 6), wantStreamed: true, wantProblems: 1, wantIncomplete: true},
		{name: "payloads one byte below the threshold", stub: modelCallStub("r1", &belowEx, 7), want: wantLine(&belowEx, 7), wantPayload: capture.StreamedLineBytes - 1},
		{name: "payloads at the threshold", stub: modelCallStub("r1", &atEx, 8), want: wantLine(&atEx, 8), wantPayload: capture.StreamedLineBytes, wantStreamed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, problems, l := attrLine(t, tt.stub)
			if tt.want != "" {
				require.Equal(t, tt.want, line)
			}
			require.Len(t, problems, tt.wantProblems)
			if tt.wantPayload != 0 {
				require.Equal(t, tt.wantPayload, l.PayloadBytes())
			}
			wantHookSize := len(line)
			if tt.wantStreamed {
				wantHookSize = l.SizeHint()
				require.NotEqual(t, len(line), wantHookSize, "the hook size tells the paths apart")
			}
			wantStats := outcomes{"written": 1}
			if tt.wantProblems > 0 {
				wantStats = outcomes{"partial": 1}
			}

			t.Run("DurableProcessor", func(t *testing.T) {
				var rec sizeRecorder
				store := newStore(t, capture.WithWriteHook(rec.hook))
				logger, _ := newLogger()
				mopt, stats := meter(t)
				p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
				require.NoError(t, err)
				p.OnEnd(tt.stub.Snapshot())
				require.NoError(t, p.Shutdown(t.Context()))
				got := readFile(t, store, "r1")
				require.Equal(t, len(line), len(got))
				require.True(t, got == line, "the file holds exactly the attribute line")
				assert.Equal(t, wantStats, stats())
				assert.Equal(t, tt.wantIncomplete, incomplete(t, store, "r1"))
				assert.Equal(t, []int{wantHookSize}, rec.get(), "streamed: the hook sees the size hint; else the line's length")
				rows, err := store.Read("r1")
				require.NoError(t, err)
				assert.Len(t, rows, 1)
			})
			t.Run("Exporter", func(t *testing.T) {
				var rec sizeRecorder
				store := newStore(t, capture.WithWriteHook(rec.hook))
				logger, _ := newLogger()
				mopt, stats := meter(t)
				e, err := New(store, WithLogger(logger), mopt)
				require.NoError(t, err)
				next := testExchange("0f1e2d3c4b5a69788796a5b4c3d2e1f0") // another call: not a duplicate
				require.NoError(t, e.ExportSpans(t.Context(), []sdktrace.ReadOnlySpan{tt.stub.Snapshot(), modelCallStub("r1", next, 9).Snapshot()}))
				require.NoError(t, e.Shutdown(t.Context()))
				want := line + wantLine(next, 9)
				got := readFile(t, store, "r1")
				require.Equal(t, len(want), len(got))
				require.True(t, got == want, "the file holds exactly the attribute lines")
				exporterStats := outcomes{"written": wantStats["written"] + 1} // the small record after it
				if n := wantStats["partial"]; n > 0 {
					exporterStats["partial"] = n
				}
				assert.Equal(t, exporterStats, stats())
				assert.Equal(t, tt.wantIncomplete, incomplete(t, store, "r1"))
				assert.Equal(t, []int{wantHookSize, len(wantLine(next, 9))}, rec.get())
			})
		})
	}
}

// A streamed record that the disk cannot take fails, marks its rollout incomplete and leaves no
// partial line.
func TestStreamedRecordWriteFailure(t *testing.T) {
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	ex.ResponseRaw = strp(bigSSE(400 << 10))
	tests := []struct {
		name string
		keep int // bytes the "disk" accepts before ENOSPC
	}{
		{name: "nothing written", keep: 0},
		{name: "one piece and a bit written", keep: capture.LinePieceBytes + 100},
		{name: "most of the line written", keep: 350 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t, capture.WithWriteHook(func(string, int) (int, error) { return tt.keep, unix.ENOSPC }))
			logger, logs := newLogger()
			mopt, stats := meter(t)
			p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
			require.NoError(t, err)
			p.OnEnd(modelCallStub("r1", ex, 1).Snapshot())
			require.NoError(t, p.Shutdown(t.Context()))
			assert.Equal(t, "", readFile(t, store, "r1"), "cut back")
			assert.True(t, incomplete(t, store, "r1"))
			assert.Equal(t, outcomes{"failed": 1}, stats())
			assert.Contains(t, logs.String(), "no space left on device")
		})
	}
}

// The forwarding processor never streams to the local store: a large span is exported to the
// collector whole and nothing is written locally.
func TestForwardingProcessorLargeRecord(t *testing.T) {
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	ex.ResponseRaw = strp(bigSSE(300 << 10))
	ex.Request = []byte(bigObject(200 << 10))
	stub := modelCallStub("r1", ex, 1)
	var rec sizeRecorder
	store := newStore(t, capture.WithWriteHook(rec.hook))
	next := fakeCollector{InMemoryExporter: tracetest.NewInMemoryExporter()}
	mopt, stats := meter(t)
	p, err := NewForwardingProcessor(store, next, mopt)
	require.NoError(t, err)
	p.OnEnd(stub.Snapshot())

	spans := next.GetSpans()
	require.Len(t, spans, 1, "the span is exported")
	got := map[attribute.Key]string{}
	for _, kv := range spans[0].Attributes {
		got[kv.Key] = kv.Value.Emit()
	}
	assert.Equal(t, *ex.ResponseRaw, got[semconv.GymtraceResponseRawKey], "the whole payload travels on the span")
	assert.Equal(t, string(ex.Request), got[semconv.GymtraceRequestBodyKey])
	ok, err := store.HasCapture("r1")
	require.NoError(t, err)
	assert.False(t, ok, "no capture file, no marker")
	assert.Empty(t, rec.get(), "no local commit")
	assert.Equal(t, outcomes{"written": 1}, stats())
	require.NoError(t, p.Shutdown(t.Context()))
}
