package proxy

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/internal/testkit/bomb"
	"github.com/gymtrace/gymtrace/semconv"
)

// encodeBody returns plain in Content-Encoding coding ("identity": unchanged).
func encodeBody(t testing.TB, coding string, plain []byte) []byte {
	t.Helper()
	switch coding {
	case "identity":
		return plain
	case "gzip":
		return compressWith(func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })(plain)
	case "deflate":
		return compressWith(func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })(plain)
	case "br":
		return compressWith(func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) })(plain)
	case "zstd":
		w, err := zstd.NewWriter(nil)
		require.NoError(t, err)
		defer w.Close()
		return w.EncodeAll(plain, nil)
	}
	t.Fatalf("unknown coding %q", coding)
	return nil
}

// chunked cuts b into the pieces an upstream writes (and flushes) one by one: whole when size is
// 0, else pieces of size bytes, or of random sizes up to -size from seed when size < 0.
func chunked(b []byte, size int, seed uint64) [][]byte {
	if size == 0 {
		return [][]byte{b}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e37))
	var out [][]byte
	for len(b) > 0 {
		n := size
		if size < 0 {
			n = 1 + r.IntN(-size)
		}
		n = min(n, len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// boundedCall is one call through a proxy with the given options to an upstream that writes wire
// in pieces.
type boundedCall struct {
	coding string
	wire   []byte
	sse    bool
	pieces [][]byte
	length bool // the upstream declares Content-Length
}

// run makes the call and returns what the client received, the record and its raw line.
func (c boundedCall) run(t *testing.T, env *testEnv, rollout string) (got []byte, rec map[string]any, line string) {
	t.Helper()
	path := "/v1/responses"
	if c.sse {
		path = "/v1/chat/completions"
	}
	resp, got, err := env.post(t, "/ng-rollout/"+rollout+path, chatRequest, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	recs, lines := env.records(t, rollout)
	require.Len(t, recs, 1, "one record")
	return got, recs[0], lines[0]
}

func (c boundedCall) upstream(t *testing.T) string {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		ct := "application/json"
		if c.sse {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		if c.coding != "identity" {
			w.Header().Set("Content-Encoding", c.coding)
		}
		if c.length {
			w.Header().Set("Content-Length", strconv.Itoa(len(c.wire)))
		}
		for _, p := range c.pieces {
			if _, err := w.Write(p); err != nil {
				return
			}
			flush(w)
		}
	}).URL
}

// jsonBody returns a Responses object padded with about n bytes of text drawn from seed: words of
// a small vocabulary (compressing many times over) or, when random, hex digits (about 2:1).
func jsonBody(n int, seed uint64, random bool) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"the ", "model ", "answer ", "is ", "four ", "tokens ", "stream ", "capture "}
	var b bytes.Buffer
	b.WriteString(`{"id":"resp_b","object":"response","status":"completed","model":"m","output":[],"pad":"`)
	for b.Len() < n {
		if random {
			b.WriteString(strconv.FormatUint(r.Uint64(), 16))
		} else {
			b.WriteString(words[r.IntN(len(words))])
		}
	}
	b.WriteString(`"}`)
	return b.Bytes()
}

// sseBody returns a chat stream of about n bytes, ending in [DONE]; its deltas are random hex
// digits (the stream compresses about 3:1).
func sseBody(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%x%x \"},\"finish_reason\":null}]}\n\n", r.Uint64(), r.Uint64())
	}
	b.WriteString(chatDone)
	return b.Bytes()
}

// wantBound checks the record's capture_bound (SPEC §0 D15) and returns its kind.
func wantBound(t *testing.T, rec map[string]any, line string, kind string, limit int64, seen int) {
	t.Helper()
	b, ok := rec["capture_bound"].(map[string]any)
	require.True(t, ok, "the record carries capture_bound: %.300s", line)
	assert.Equal(t, kind, b["kind"])
	assert.Equal(t, json.Number(strconv.FormatInt(limit, 10)), b["limit"])
	assert.Equal(t, json.Number(strconv.Itoa(seen)), b["seen"], "seen = bytes received")
	assert.Regexp(t, `"span_id":"[0-9a-f]{16}","capture_bound":\{"kind":"`+kind+`","limit":\d+,"seen":\d+\}\}\n$`, line,
		"capture_bound is the last key, after trace_id/span_id")
	assert.Nil(t, rec["error_category"], "a 200 cut by a bound is no error: never stream_truncated or capture_parse_error")
}

// TestProxyCaptureBounds: for every encoding and chunking, a response past one of D15's bounds is
// forwarded byte for byte, and the record holds the prefix captured up to the bound, names the
// bound, keeps error_category null and marks the rollout incomplete (SPEC §0 D15).
func TestProxyCaptureBounds(t *testing.T) {
	codings := append([]string{"identity"}, bomb.Codings...)
	chunkings := []struct {
		name string
		size int
	}{{"one write", 0}, {"4 KiB writes", 4 << 10}, {"random writes", -3000}}
	plain := jsonBody(256<<10, 1, true)
	words := jsonBody(256<<10, 1, false)
	stream := sseBody(256 << 10)
	for _, coding := range codings {
		for _, ch := range chunkings {
			for _, tc := range []struct {
				name  string
				sse   bool
				opts  []Option
				kind  string
				limit int64
				// prefix: the decoded bytes the record must hold exactly (0: only a prefix of the body)
				prefix int
			}{
				{name: "response bytes", opts: []Option{WithMaxResponseBytes(16 << 10)}, kind: semconv.CaptureBoundKindResponseBytes, limit: 16 << 10},
				{name: "response bytes, stream", sse: true, opts: []Option{WithMaxResponseBytes(16 << 10)}, kind: semconv.CaptureBoundKindResponseBytes, limit: 16 << 10},
				{name: "decoded bytes", opts: []Option{WithMaxDecodedBytes(100 << 10)}, kind: semconv.CaptureBoundKindDecodedBytes, limit: 100 << 10, prefix: 100 << 10},
				{name: "decoded bytes, stream", sse: true, opts: []Option{WithMaxDecodedBytes(100 << 10)}, kind: semconv.CaptureBoundKindDecodedBytes, limit: 100 << 10, prefix: 100 << 10},
				{name: "decode ratio", opts: []Option{WithMaxDecodeRatio(2)}, kind: semconv.CaptureBoundKindDecodeRatio, limit: 2},
				{name: "in-flight budget", opts: []Option{WithMaxCaptureBytesInFlight(32 << 10)}, kind: semconv.CaptureBoundKindInFlightBudget, limit: 32 << 10},
			} {
				encodedOnly := tc.kind == semconv.CaptureBoundKindDecodedBytes || tc.kind == semconv.CaptureBoundKindDecodeRatio
				if coding == "identity" && encodedOnly {
					continue // nothing is decoded
				}
				t.Run(coding+"/"+ch.name+"/"+tc.name, func(t *testing.T) {
					body := plain
					switch {
					case tc.sse:
						body = stream
					case tc.kind == semconv.CaptureBoundKindDecodeRatio:
						body = words
					}
					wire := encodeBody(t, coding, body)
					c := boundedCall{coding: coding, wire: wire, sse: tc.sse, pieces: chunked(wire, ch.size, 42), length: !tc.sse}
					env := newProxyEnv(t, c.upstream(t), nil, tc.opts...)
					got, rec, line := c.run(t, env, "bounded")
					assert.Equal(t, wire, got, "the client gets the exact upstream bytes")
					wantBound(t, rec, line, tc.kind, tc.limit, len(wire))
					raw, _ := rec["response_raw"].(string)
					require.True(t, strings.HasPrefix(string(body), raw), "response_raw is a prefix of the decoded body")
					assert.Less(t, len(raw), len(body), "the record holds a prefix")
					if tc.prefix > 0 {
						assert.Len(t, raw, tc.prefix, "decoded exactly up to the bound")
					}
					if coding == "identity" && tc.kind == semconv.CaptureBoundKindResponseBytes {
						assert.Len(t, raw, int(tc.limit), "received bytes kept up to the bound")
					}
					if tc.kind == semconv.CaptureBoundKindResponseBytes && (coding != "zstd" || tc.sse) {
						// zstd emits whole blocks (up to 128 KiB decoded): a 16 KiB prefix of the
						// dense JSON body may end inside the first one and decode to nothing.
						assert.Greater(t, len(raw), 4<<10, "the bytes received up to the bound are decoded as far as they go")
					}
					if !tc.sse {
						assert.Nil(t, rec["response"], "an incomplete JSON object is null")
					}
					incomplete, err := env.store.IsIncomplete("bounded")
					require.NoError(t, err)
					assert.True(t, incomplete, "the rollout is marked incomplete")
					assert.Contains(t, env.logs.String(), "capture_bound="+tc.kind)
				})
			}
		}
	}
}

// TestProxyDecompressionBombs reproduces issue #14's attacks at their real sizes: a brotli body of a
// few KB decoding to 4 GiB, a ~1 MiB gzip body decoding to 1 GiB, and a deflate and a zstd bomb,
// under the default bounds. Each is forwarded exactly; capture stops at the decode ratio at once, so
// the record is written within seconds, and the calls before and after are captured whole.
func TestProxyDecompressionBombs(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
	bombs := map[string][]byte{}
	for coding, decoded := range map[string]int64{"br": 4 << 30, "gzip": 1 << 30, "deflate": 1 << 30, "zstd": 1 << 30} {
		b, err := bomb.Zeros(coding, decoded)
		require.NoError(t, err)
		bombs[coding] = b
	}
	var coding string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if coding == "" {
			_, _ = io.WriteString(w, `{"id":"resp_ok","object":"response","status":"completed","model":"m","output":[]}`)
			return
		}
		w.Header().Set("Content-Encoding", coding)
		for _, p := range chunked(bombs[coding], 32<<10, 0) {
			_, _ = w.Write(p)
			flush(w)
		}
	})
	env := newProxyEnv(t, up.URL, nil, WithMeterProvider(mp))
	for _, c := range []string{"br", "gzip", "deflate", "zstd"} {
		coding = ""
		_, _, err := env.post(t, "/ng-rollout/normal-"+c+"/v1/responses", chatRequest, nil)
		require.NoError(t, err)
		coding = c
		start := time.Now()
		_, got, err := env.post(t, "/ng-rollout/bomb-"+c+"/v1/responses", chatRequest, nil)
		require.NoError(t, err)
		took := time.Since(start)
		t.Logf("%s bomb: %d bytes forwarded in %v", c, len(got), took)
		assert.Equal(t, bombs[c], got, "the client gets the exact bytes")
		recs, lines := env.records(t, "bomb-"+c)
		require.Len(t, recs, 1)
		wantBound(t, recs[0], lines[0], semconv.CaptureBoundKindDecodeRatio, DefaultMaxDecodeRatio, len(bombs[c]))
		raw, _ := recs[0]["response_raw"].(string)
		assert.LessOrEqual(t, len(raw), DefaultMaxDecodeRatio*len(bombs[c]), "decoded at most ratio × encoded")
		assert.Less(t, took, 30*time.Second, "decoding stopped at the bound")
		rec := env.record(t, "normal-"+c)
		assert.NotContains(t, rec, "capture_bound")
		incomplete, err := env.store.IsIncomplete("normal-" + c)
		require.NoError(t, err)
		assert.False(t, incomplete)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	var bounded int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != semconv.GymtraceCaptureBoundedCallsName {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureBoundKindKey)
				assert.Equal(t, semconv.CaptureBoundKindDecodeRatio, kind.AsString())
				bounded += dp.Value
			}
		}
	}
	assert.EqualValues(t, 4, bounded, "gymtrace.capture.bounded_calls counts each bomb")
}

// TestPushDecoderNeverDelaysForwarding: a push that does not wait returns while decoding is still
// under way (here: blocked in its output), so forwarding never waits for decoding (SPEC §0 D15).
func TestPushDecoderNeverDelaysForwarding(t *testing.T) {
	body, err := bomb.Zeros("br", 64<<20)
	require.NoError(t, err)
	unblock := make(chan struct{})
	var decoded int64
	d := newPushDecoder([]string{"br"}, newTestCallBudget(), func(p []byte) {
		<-unblock
		decoded += int64(len(p))
	})
	pushed := make(chan struct{})
	go func() {
		d.push(body[:len(body)/2], false)
		d.push(body, false)
		close(pushed)
	}()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("push waited for the decoder")
	}
	close(unblock)
	require.NoError(t, d.close())
	// The ratio bound is ratio × the encoded bytes read when it is reached: the decoder may have
	// read only the first push (a loaded machine runs it before the second) or the whole body.
	assert.GreaterOrEqual(t, decoded, int64(DefaultMaxDecodeRatio*(len(body)/2)), "decoded up to the ratio bound of what it read")
	assert.LessOrEqual(t, decoded, int64(DefaultMaxDecodeRatio*len(body)), "never past the ratio bound of the whole body")
}

// FuzzCaptureBounds: for any body, encoding, chunking and bounds the client gets the exact bytes;
// the record holds the whole body, or a prefix of it and a capture_bound naming a bound the call
// passed, never stream_truncated or capture_parse_error.
func FuzzCaptureBounds(f *testing.F) {
	f.Add(uint8(0), uint64(1), uint16(300), uint32(64<<10), uint32(128<<10), uint16(1000), false)
	f.Add(uint8(1), uint64(2), uint16(100), uint32(4<<10), uint32(1<<20), uint16(1000), true)
	f.Add(uint8(2), uint64(3), uint16(0), uint32(1<<20), uint32(8<<10), uint16(1000), false)
	f.Add(uint8(3), uint64(4), uint16(7), uint32(1<<20), uint32(1<<20), uint16(2), true)
	f.Add(uint8(4), uint64(5), uint16(2000), uint32(1<<20), uint32(1<<20), uint16(1000), false)
	f.Fuzz(func(t *testing.T, codingIdx uint8, seed uint64, chunk uint16, maxResp, maxDecoded uint32, ratio uint16, sse bool) {
		codings := append([]string{"identity"}, bomb.Codings...)
		coding := codings[int(codingIdx)%len(codings)]
		n := int(seed%(256<<10)) + 1
		body := jsonBody(n, seed, seed%3 == 0)
		if sse {
			body = sseBody(n)
		}
		wire := encodeBody(t, coding, body)
		c := boundedCall{coding: coding, wire: wire, sse: sse, pieces: chunked(wire, -int(chunk%4096)-1, seed), length: seed%2 == 0}
		bounds := captureBounds{maxResponse: int64(maxResp%(512<<10)) + 1, maxDecoded: int64(maxDecoded%(512<<10)) + 1, ratio: int64(ratio%2000) + 1}
		env := newProxyEnv(t, c.upstream(t), nil, WithMaxResponseBytes(bounds.maxResponse), WithMaxDecodedBytes(bounds.maxDecoded), WithMaxDecodeRatio(bounds.ratio))
		got, rec, line := c.run(t, env, "fuzz")
		require.Equal(t, wire, got, "the client gets the exact bytes")
		assert.NotEqual(t, "stream_truncated", rec["error_category"], line)
		assert.NotEqual(t, "capture_parse_error", rec["error_category"], line)
		raw, hasRaw := rec["response_raw"].(string)
		b, bounded := rec["capture_bound"].(map[string]any)
		if !bounded {
			assert.LessOrEqual(t, int64(len(wire)), bounds.maxResponse, "a response past the response bound names it")
			if hasRaw {
				assert.Equal(t, string(body), raw, "an unbounded record holds the whole body")
			} else {
				assert.NotNil(t, rec["response"])
			}
			return
		}
		assert.True(t, strings.HasPrefix(string(body), raw), "response_raw is a prefix of the body")
		assert.Equal(t, json.Number(strconv.Itoa(len(wire))), b["seen"])
		switch b["kind"] {
		case semconv.CaptureBoundKindResponseBytes:
			assert.Greater(t, int64(len(wire)), bounds.maxResponse)
		case semconv.CaptureBoundKindDecodedBytes:
			assert.NotEqual(t, "identity", coding)
			assert.LessOrEqual(t, int64(len(raw)), bounds.maxDecoded)
		case semconv.CaptureBoundKindDecodeRatio:
			assert.NotEqual(t, "identity", coding)
		default:
			t.Fatalf("capture_bound kind %v", b["kind"])
		}
	})
}
