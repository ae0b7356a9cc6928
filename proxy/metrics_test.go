package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// The conventions' bucket boundaries, spelled out here so a change in semconv cannot go unnoticed.
var (
	wantTokenBounds    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	wantDurationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// newMetricReader returns a meter provider over a manual reader, shut down at cleanup.
func newMetricReader(t *testing.T) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	return mp, r
}

// collect returns the metrics of the gymtrace proxy scope and of the capture span writer's scope by
// name, checking the scopes.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(t.Context(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != captureScope {
			require.Equal(t, instrumentationName, sm.Scope.Name)
			assert.Equal(t, semconv.SchemaURL, sm.Scope.SchemaURL)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// oneAt returns the bucket counts of a single measurement in bucket i of 15 (14 boundaries).
func oneAt(i int) []uint64 {
	c := make([]uint64, 15)
	c[i] = 1
	return c
}

func floatPoint(set attribute.Set, v float64, bucket int) metricdata.HistogramDataPoint[float64] {
	return metricdata.HistogramDataPoint[float64]{
		Attributes: set, Count: 1, Bounds: wantDurationBounds, BucketCounts: oneAt(bucket),
		Min: metricdata.NewExtrema(v), Max: metricdata.NewExtrema(v), Sum: v,
	}
}

func intPoint(set attribute.Set, v int64, bucket int) metricdata.HistogramDataPoint[int64] {
	return metricdata.HistogramDataPoint[int64]{
		Attributes: set, Count: 1, Bounds: wantTokenBounds, BucketCounts: oneAt(bucket),
		Min: metricdata.NewExtrema(v), Max: metricdata.NewExtrema(v), Sum: v,
	}
}

// captureScope is the instrumentation scope of the capture span writer's metrics.
const captureScope = "github.com/gymtrace/gymtrace/capture"

// writerSpans is the gymtrace.capture.writer.spans metric of model-call spans with the given
// counts by outcome.
func writerSpans(counts map[string]int64) metricdata.Metrics {
	var pts []metricdata.DataPoint[int64]
	for _, o := range []string{"ignored", "written", "partial", "rejected", "failed"} {
		if n := counts[o]; n > 0 {
			pts = append(pts, metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
				semconv.GymtraceCaptureLineKindKey.String(semconv.GymtraceCaptureLineKindModelCall), semconv.GymtraceCaptureOutcomeKey.String(o))})
		}
	}
	return sumMetric(semconv.GymtraceCaptureWriterSpansName, semconv.GymtraceCaptureWriterSpansUnit, semconv.GymtraceCaptureWriterSpansDescription, pts...)
}

func sumMetric(name, unit, desc string, pts ...metricdata.DataPoint[int64]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Unit: unit, Description: desc, Data: metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: pts,
	}}
}

// tokenCase is a token count and the bucket it falls in.
type tokenCase struct {
	n      int64
	bucket int
}

func TestMetricsPerDialect(t *testing.T) {
	const ms = time.Millisecond
	chatJSON := `{"id":"chatcmpl-1","object":"chat.completion","model":"policy-2024","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`
	responsesSSE := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"model\":\"policy-r\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"model\":\"policy-r\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":300,\"output_tokens\":70,\"total_tokens\":370}}}\n\n"
	messagesSSE := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x-1\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5000}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	truncatedSSE := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"policy-t\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"

	tests := []struct {
		name        string
		path, body  string
		status      int // 0: the upstream is unreachable
		contentType string
		upstream    string
		ttft, end   time.Duration // ttft 0: no body bytes arrive (no clock reading)

		dialect, provider, reqModel, respModel, category string
		durationBucket                                   int
		ttfcBucket                                       int // -1: no time_to_first_chunk
		input, output                                    *tokenCase
	}{
		{
			name: "chat JSON success", path: "/v1/chat/completions", body: `{"model":"policy","messages":[{"role":"user","content":"hi"}]}`,
			status: 200, contentType: "application/json", upstream: chatJSON, ttft: 400 * ms, end: 850 * ms,
			dialect: "chat", provider: "openai", reqModel: "policy", respModel: "policy-2024",
			durationBucket: 7, ttfcBucket: -1, input: &tokenCase{8, 2}, output: &tokenCase{2, 1},
		},
		{
			name: "responses stream success", path: "/v1/responses", body: `{"model":"policy","input":"hi","stream":true}`,
			status: 200, contentType: "text/event-stream", upstream: responsesSSE, ttft: 120 * ms, end: 1500 * ms,
			dialect: "responses", provider: "openai", reqModel: "policy", respModel: "policy-r",
			durationBucket: 8, ttfcBucket: 4, input: &tokenCase{300, 5}, output: &tokenCase{70, 4},
		},
		{
			name: "messages stream success, duration over the last bound", path: "/v1/messages", body: `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			status: 200, contentType: "text/event-stream", upstream: messagesSSE, ttft: 30 * ms, end: 95 * time.Second,
			dialect: "messages", provider: "anthropic", reqModel: "claude-x", respModel: "claude-x-1",
			durationBucket: 14, ttfcBucket: 2, input: &tokenCase{20, 3}, output: &tokenCase{5000, 7},
		},
		{
			name: "rate limited", path: "/v1/chat/completions", body: `{"model":"policy","messages":[]}`,
			status: 429, contentType: "application/json", upstream: `{"error":{"message":"slow down","type":"rate_limit"}}`, ttft: 5 * ms, end: 7 * ms,
			dialect: "chat", provider: "openai", reqModel: "policy", category: "rate_limit",
			durationBucket: 0, ttfcBucket: -1,
		},
		{
			name: "upstream error, duration on a bound", path: "/v1/responses", body: `{"model":"policy","input":"x"}`,
			status: 500, contentType: "application/json", upstream: `{"error":{"message":"boom"}}`, ttft: 10 * ms, end: 20 * ms,
			dialect: "responses", provider: "openai", reqModel: "policy", category: "upstream_error",
			durationBucket: 1, ttfcBucket: -1,
		},
		{
			name: "stream truncated", path: "/v1/chat/completions", body: `{"model":"policy","stream":true,"messages":[]}`,
			status: 200, contentType: "text/event-stream", upstream: truncatedSSE, ttft: 10 * ms, end: 40 * ms,
			dialect: "chat", provider: "openai", reqModel: "policy", respModel: "policy-t", category: "stream_truncated",
			durationBucket: 2, ttfcBucket: 0,
		},
		{
			name: "upstream unreachable", path: "/v1/messages", body: `{"model":"claude-x","stream":true,"messages":[]}`,
			end:     2560 * ms,
			dialect: "messages", provider: "anthropic", reqModel: "claude-x", category: "connection",
			durationBucket: 8, ttfcBucket: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var upstreamURL string
			if tt.status == 0 {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				upstreamURL = "http://" + ln.Addr().String()
				require.NoError(t, ln.Close())
			} else {
				upstreamURL = newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", tt.contentType)
					w.WriteHeader(tt.status)
					_, _ = io.WriteString(w, tt.upstream)
				}).URL
			}
			u, err := url.Parse(upstreamURL)
			require.NoError(t, err)
			port, err := strconv.Atoi(u.Port())
			require.NoError(t, err)

			start := time.Unix(1786032154, 0)
			readings := []clockReading{{start, 0}}
			if tt.ttft > 0 {
				readings = append(readings, clockReading{time.Time{}, tt.ttft})
			}
			readings = append(readings, clockReading{start.Add(tt.end), tt.end})
			mp, reader := newMetricReader(t)
			env := newProxyEnv(t, upstreamURL, nil, WithMeterProvider(mp), withClock(pinnedClock(t, readings...)))
			resp, _, _ := env.post(t, "/ng-rollout/m-1"+tt.path, tt.body, nil)
			if tt.status != 0 {
				assert.Equal(t, tt.status, resp.StatusCode)
			}
			rec := env.record(t, "m-1")
			if tt.category == "" {
				assert.Nil(t, rec["error_category"])
			} else {
				assert.Equal(t, tt.category, rec["error_category"])
			}

			common := []attribute.KeyValue{
				semconv.GenAIOperationNameKey.String("chat"),
				semconv.GenAIProviderNameKey.String(tt.provider),
				semconv.GenAIRequestModelKey.String(tt.reqModel),
				semconv.ServerAddressKey.String("127.0.0.1"),
				semconv.ServerPortKey.Int(port),
			}
			if tt.respModel != "" {
				common = append(common, semconv.GenAIResponseModelKey.String(tt.respModel))
			}
			if tt.category != "" {
				common = append(common, semconv.ErrorTypeKey.String(tt.category))
			}
			callSet := attribute.NewSet(common...)
			got := collect(t, reader)
			opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}

			dur := tt.end.Seconds()
			metricdatatest.AssertEqual(t, metricdata.Metrics{
				Name: "gen_ai.client.operation.duration", Unit: "s", Description: "GenAI operation duration.",
				Data: metricdata.Histogram[float64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints:  []metricdata.HistogramDataPoint[float64]{floatPoint(callSet, dur, tt.durationBucket)},
				},
			}, got["gen_ai.client.operation.duration"], opts...)

			if tt.ttfcBucket < 0 {
				assert.NotContains(t, got, "gen_ai.client.operation.time_to_first_chunk")
			} else {
				metricdatatest.AssertEqual(t, metricdata.Metrics{
					Name: "gen_ai.client.operation.time_to_first_chunk", Unit: "s", Description: "Time to receive the first chunk of a streaming response.",
					Data: metricdata.Histogram[float64]{
						Temporality: metricdata.CumulativeTemporality,
						DataPoints:  []metricdata.HistogramDataPoint[float64]{floatPoint(callSet, tt.ttft.Seconds(), tt.ttfcBucket)},
					},
				}, got["gen_ai.client.operation.time_to_first_chunk"], opts...)
			}

			var tokenPts []metricdata.HistogramDataPoint[int64]
			for _, tok := range []struct {
				c   *tokenCase
				typ string
			}{{tt.input, "input"}, {tt.output, "output"}} {
				if tok.c != nil {
					set := attribute.NewSet(append(append([]attribute.KeyValue(nil), common...), semconv.GenAITokenTypeKey.String(tok.typ))...)
					tokenPts = append(tokenPts, intPoint(set, tok.c.n, tok.c.bucket))
				}
			}
			if len(tokenPts) == 0 {
				assert.NotContains(t, got, "gen_ai.client.token.usage", "unknown usage is never recorded as 0")
			} else {
				metricdatatest.AssertEqual(t, metricdata.Metrics{
					Name: "gen_ai.client.token.usage", Unit: "{token}", Description: "Number of input and output tokens used.",
					Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: tokenPts},
				}, got["gen_ai.client.token.usage"], opts...)
			}

			callAttrs := []attribute.KeyValue{semconv.GymtraceDialectKey.String(tt.dialect)}
			if tt.category != "" {
				callAttrs = append(callAttrs, semconv.GymtraceErrorCategoryKey.String(tt.category))
			}
			metricdatatest.AssertEqual(t, sumMetric("gymtrace.capture.calls", "{call}", semconv.GymtraceCaptureCallsDescription,
				metricdata.DataPoint[int64]{Attributes: attribute.NewSet(callAttrs...), Value: 1}), got["gymtrace.capture.calls"], opts...)
			metricdatatest.AssertEqual(t, writerSpans(map[string]int64{"written": 1}), got[semconv.GymtraceCaptureWriterSpansName], opts...)
			assert.NotContains(t, got, "gymtrace.capture.uncorrelated_calls")

			// Payload bytes: the sizes of the payload attributes the span carries.
			sa := env.spanAttrs(t)
			size := func(k attribute.Key) int64 { return sa[k+".size"].AsInt64() }
			var bytePts []metricdata.DataPoint[int64]
			if n := size(semconv.GymtraceRequestBodyKey) + size(semconv.GymtraceRequestRawKey); n > 0 {
				assert.Equal(t, int64(len(tt.body)), n, "the request is captured as sent")
				bytePts = append(bytePts, metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.GymtraceCaptureDirectionKey.String("request")), Value: n})
			}
			if n := size(semconv.GymtraceResponseBodyKey) + size(semconv.GymtraceResponseRawKey); n > 0 {
				bytePts = append(bytePts, metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.GymtraceCaptureDirectionKey.String("response")), Value: n})
			}
			require.NotEmpty(t, bytePts)
			metricdatatest.AssertEqual(t, sumMetric("gymtrace.capture.bytes", "By", semconv.GymtraceCaptureBytesDescription, bytePts...),
				got["gymtrace.capture.bytes"], opts...)
		})
	}
}

// TestMetricsAggregate: calls with the same attributes share one histogram point (count, sum,
// min, max, buckets); a failed capture write is counted.
func TestMetricsAggregate(t *testing.T) {
	model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"r","object":"response","model":"m2","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":0}}`)
	})
	var fail bool
	store := newTestStore(t, capture.WithSyncHook(func(string) error {
		if fail {
			return errors.New("disk on fire")
		}
		return nil
	}))
	start := time.Unix(1786032154, 0)
	mp, reader := newMetricReader(t)
	env := newCaptureEnv(t, model, store, WithMeterProvider(mp), withClock(pinnedClock(t,
		clockReading{start, 0}, clockReading{time.Time{}, 10 * time.Millisecond}, clockReading{start, 50 * time.Millisecond},
		clockReading{start, time.Second}, clockReading{time.Time{}, time.Second + time.Millisecond}, clockReading{start, 4 * time.Second},
	)))
	for i := range 2 {
		fail = i == 1
		resp, _, err := env.post(t, "/ng-rollout/agg/v1/responses", `{"model":"m"}`, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	got := collect(t, reader)
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
	set := attribute.NewSet(
		semconv.GenAIOperationNameKey.String("chat"), semconv.GenAIProviderNameKey.String("openai"),
		semconv.GenAIRequestModelKey.String("m"), semconv.GenAIResponseModelKey.String("m2"))
	counts := make([]uint64, 15)
	counts[3], counts[9] = 1, 1 // 0.05 s in (0.04, 0.08], 3 s in (2.56, 5.12]
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: "gen_ai.client.operation.duration", Unit: "s", Description: "GenAI operation duration.",
		Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{{
			Attributes: set, Count: 2, Bounds: wantDurationBounds, BucketCounts: counts,
			Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(3.0), Sum: 0.05 + 3.0,
		}}},
	}, got["gen_ai.client.operation.duration"], opts...)
	tokCounts := func(i int) []uint64 { c := make([]uint64, 15); c[i] = 2; return c }
	in := attribute.NewSet(append(set.ToSlice(), semconv.GenAITokenTypeKey.String("input"))...)
	out := attribute.NewSet(append(set.ToSlice(), semconv.GenAITokenTypeKey.String("output"))...)
	metricdatatest.AssertEqual(t, metricdata.Metrics{
		Name: "gen_ai.client.token.usage", Unit: "{token}", Description: "Number of input and output tokens used.",
		Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{
			{Attributes: in, Count: 2, Bounds: wantTokenBounds, BucketCounts: tokCounts(0), Min: metricdata.NewExtrema[int64](1), Max: metricdata.NewExtrema[int64](1), Sum: 2},
			{Attributes: out, Count: 2, Bounds: wantTokenBounds, BucketCounts: tokCounts(0), Min: metricdata.NewExtrema[int64](0), Max: metricdata.NewExtrema[int64](0), Sum: 0},
		}},
	}, got["gen_ai.client.token.usage"], opts...)
	assert.NotContains(t, got, "gen_ai.client.operation.time_to_first_chunk", "not a streaming call")
	metricdatatest.AssertEqual(t, sumMetric("gymtrace.capture.calls", "{call}", semconv.GymtraceCaptureCallsDescription,
		metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.GymtraceDialectKey.String("responses")), Value: 2}), got["gymtrace.capture.calls"], opts...)
	metricdatatest.AssertEqual(t, writerSpans(map[string]int64{"written": 1, "failed": 1}), got[semconv.GymtraceCaptureWriterSpansName], opts...)
	inc, err := store.IsIncomplete("agg")
	require.NoError(t, err)
	assert.True(t, inc)
}

func TestMetricsUncorrelated(t *testing.T) {
	mp, reader := newMetricReader(t)
	env := newCaptureEnv(t, http.NotFoundHandler(), nil, WithMeterProvider(mp))
	env.h.countUncorrelated(t.Context(), "chat")
	env.h.countUncorrelated(t.Context(), "chat")
	env.h.countUncorrelated(t.Context(), "messages")
	got := collect(t, reader)
	metricdatatest.AssertEqual(t, sumMetric("gymtrace.capture.uncorrelated_calls", "{call}", semconv.GymtraceCaptureUncorrelatedCallsDescription,
		metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.GymtraceDialectKey.String("chat")), Value: 2},
		metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.GymtraceDialectKey.String("messages")), Value: 1},
	), got["gymtrace.capture.uncorrelated_calls"], metricdatatest.IgnoreTimestamp())

	// Without a meter provider nothing is recorded and nothing fails.
	plain := newCaptureEnv(t, http.NotFoundHandler(), nil)
	assert.Nil(t, plain.h.metrics)
	plain.h.countUncorrelated(t.Context(), "chat")
	plain.h.metrics.recordCall(t.Context(), nil, &capture.Exchange{})
}
