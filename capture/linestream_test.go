package capture_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file checks SpanLine.WriteTo against SpanLine.AppendTo and AppendLineFromAttributes: the
// pieces of a line, concatenated, are the line, whatever the payloads hold and wherever their
// special bytes fall relative to the writer's 32 KiB windows and 64 KiB pieces.

// streamWindow is the payload window of the line writer (capture's lineWindow): how much of a
// payload is escaped or copied between two piece-size checks.
const streamWindow = 32 << 10

// maxStreamPiece bounds a piece: a full piece plus one window escaped at the worst growth (a
// control character becomes \u00XX, six bytes).
const maxStreamPiece = capture.LinePieceBytes + 6*streamWindow

const (
	streamTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	streamSpanID  = "00f067aa0ba902b7"
)

var (
	streamStart = time.Unix(1786032154, 123456641).UTC()
	streamEnd   = time.Unix(1786032154, 966123137).UTC()
)

// kvLookup is the lookup the SDK adapters use (the last value of a key wins).
type kvLookup = capture.Attributes

// payloadKeys are the four payload attributes.
var payloadKeys = []attribute.Key{
	semconv.GymtraceRequestBodyKey, semconv.GymtraceRequestRawKey,
	semconv.GymtraceResponseBodyKey, semconv.GymtraceResponseRawKey,
}

// usablePayloadBytes is what PayloadBytes must report, computed from the attributes: the lengths of
// the payload strings whose size attribute is absent or agrees.
func usablePayloadBytes(a kvLookup) int {
	n := 0
	for _, k := range payloadKeys {
		v, ok := a.Lookup(string(k))
		if !ok || v.Type() != attribute.STRING {
			continue
		}
		sk, _ := semconv.PayloadSizeKey(k)
		if sz, ok := a.Lookup(string(sk)); ok && sz.AsInt64() != int64(len(v.AsString())) {
			continue
		}
		n += len(v.AsString())
	}
	return n
}

// headKVs are the non-payload attributes of a complete record.
func headKVs() []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GymtraceModelCallIDKey.String("863410a8d52e4be6a31efc5c6e9d4629"),
		semconv.GymtraceDialectKey.String("chat"),
		semconv.GymtraceModelRefTypeKey.String(capture.ModelRefType),
		semconv.GymtraceModelRefNameKey.String("policy_model"),
		semconv.GymtraceLatencyMSKey.Float64(842.7),
		semconv.GymtraceLatencyTTFTMSKey.Float64(213.4),
		semconv.HTTPResponseStatusCodeKey.Int(200),
	}
}

// payloadKV returns a payload attribute with its size attribute (size < 0: the true length).
func payloadKV(k attribute.Key, s string, size int) []attribute.KeyValue {
	sk, ok := semconv.PayloadSizeKey(k)
	if !ok {
		panic("not a payload key: " + string(k))
	}
	if size < 0 {
		size = len(s)
	}
	return []attribute.KeyValue{k.String(s), sk.Int(size)}
}

// spanKVs is a record's attributes: the head plus the given payload attributes.
func spanKVs(payloads ...[]attribute.KeyValue) []attribute.KeyValue {
	kvs := headKVs()
	for _, p := range payloads {
		kvs = append(kvs, p...)
	}
	return kvs
}

// streamSpecials are byte sequences that must survive a window or piece boundary: escaped bytes,
// 2/3/4-byte runes, U+2028, and ill-formed UTF-8 of every kind.
var streamSpecials = []string{
	`"`, `\`, "\n", "\r\n", "\t", "\x00", "\x1f", "\x7f",
	"é", "東", "🙂", "\u2028", "\ufffd",
	"\xff", "\x80", "\xc3", "\xe6\x97", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\x80\x80\x80\x80",
}

// boundaryText returns a text of size bytes made of filler, with a special sequence straddling,
// starting at or ending at each of the line writer's window boundaries (found with ojson.CutUTF8
// exactly as the writer finds them), more specials next to each boundary, and specials at the very
// start and end. shift varies which special goes where.
func boundaryText(size int, filler string, shift int) string {
	b := []byte(strings.Repeat(filler, size/len(filler)+1)[:size])
	put := func(at int, s string) {
		if at >= 0 && at+len(s) <= len(b) {
			copy(b[at:], s)
		}
	}
	for pos, k := 0, 0; pos+streamWindow < len(b); k++ {
		edge := pos + streamWindow
		sp := streamSpecials[(k+shift)%len(streamSpecials)]
		put(edge-(k+shift)%(len(sp)+1), sp)                          // straddles, starts at, or ends at the edge
		put(edge-8, streamSpecials[(k+shift+3)%len(streamSpecials)]) // close before
		put(edge+5, streamSpecials[(k+shift+7)%len(streamSpecials)]) // close after
		n := ojson.CutUTF8(string(b[pos:edge+1]), streamWindow)
		pos += n
	}
	put(0, streamSpecials[shift%len(streamSpecials)])
	tail := streamSpecials[(shift+5)%len(streamSpecials)]
	put(len(b)-len(tail), tail)
	return string(b)
}

// The fillers of the large raw texts: a stream's SSE text (quotes and newlines throughout), text
// that grows six-fold when escaped, ill-formed UTF-8 that grows three-fold, and multibyte text.
const (
	sseFiller       = "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Grüß dich\"}}]}\n\n"
	controlFiller   = "\x01\x02\x03\x1b\x00"
	invalidFiller   = "\xff\xfe\x80"
	multibyteFiller = "東京🙂é"
)

// largeObject returns a compact JSON object of about size bytes whose strings hold quotes,
// escapes and multibyte text (valid strict JSON).
func largeObject(size int, r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(`{"id":"chatcmpl-big","object":"chat.completion","choices":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"index":`)
		b.WriteString(string(rune('0' + i%10)))
		b.WriteString(`,"message":{"role":"assistant","content":`)
		var text strings.Builder
		for range 200 + r.IntN(400) {
			text.WriteString([]string{"word ", "\"q\" ", "\\", "\n", "東京 ", "🙂", "\u2028", "\t", "é"}[r.IntN(9)])
		}
		b.Write(ojson.AppendString(nil, text.String()))
		b.WriteString(`,"n":[1,-2.5e3,true,null,{}]}}`)
	}
	b.WriteString(`],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	return b.String()
}

// spacedObject returns obj indented (valid, not compact: spaces and newlines between tokens).
func spacedObject(t *testing.T, obj string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, []byte(obj), " ", "  "))
	return b.String()
}

// streamCase is one span's attributes for checkWriteTo.
type streamCase struct {
	name string
	kvs  []attribute.KeyValue
	// traceID and spanID default to streamTraceID and streamSpanID unless noIDs is set.
	traceID, spanID string
	noIDs           bool
	start, end      time.Time
	wantLine        string // when set, the line must be exactly this too
	wantProblems    int    // how many payloads the line writes as null although the span had them
}

// writeToPieces runs WriteTo on a fresh SpanLine of c with buf and returns copies of the pieces
// and the line's Problems.
func writeToPieces(t *testing.T, c streamCase, buf []byte) ([][]byte, capture.Problems) {
	t.Helper()
	l, err := capture.NewSpanLine(kvLookup(c.kvs), c.start, c.end, c.traceID, c.spanID)
	require.NoError(t, err)
	var pieces [][]byte
	rest, err := l.WriteTo(buf, func(p []byte) error {
		pieces = append(pieces, bytes.Clone(p))
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, rest, "WriteTo returns its buffer emptied")
	return pieces, l.Problems()
}

// checkWriteTo checks that WriteTo's pieces are AppendTo's line and AppendLineFromAttributes's, with
// the same Problems, and that the pieces have the promised sizes.
func checkWriteTo(t *testing.T, c streamCase) {
	t.Helper()
	if c.traceID == "" && c.spanID == "" && !c.noIDs {
		c.traceID, c.spanID = streamTraceID, streamSpanID
	}
	if c.start.IsZero() {
		c.start, c.end = streamStart, streamEnd
	}
	a := kvLookup(c.kvs)
	const prefix = "previous line\n"
	want, wantProblems, wantErr := capture.AppendLineFromAttributes([]byte(prefix), a, c.start, c.end, c.traceID, c.spanID)
	l, err := capture.NewSpanLine(a, c.start, c.end, c.traceID, c.spanID)
	if wantErr != nil {
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
		assert.Nil(t, l)
		assert.Equal(t, prefix, string(want))
		return
	}
	require.NoError(t, err)
	line := string(want[len(prefix):])
	if c.wantLine != "" {
		require.Equal(t, c.wantLine, line)
	}
	require.Len(t, wantProblems, c.wantProblems, "%v", wantProblems)
	assert.Equal(t, usablePayloadBytes(a), l.PayloadBytes())
	assert.GreaterOrEqual(t, l.SizeHint(), l.PayloadBytes())

	// AppendTo.
	appended := l.AppendTo([]byte("x"))
	require.Equal(t, "x"+line, string(appended), "AppendTo is AppendLineFromAttributes")
	require.Equal(t, wantProblems, l.Problems())

	// WriteTo from a nil buffer and from a dirty, roomy one.
	for _, buf := range [][]byte{nil, append(make([]byte, 0, 300<<10), "garbage"...)} {
		pieces, problems := writeToPieces(t, c, buf)
		require.Equal(t, wantProblems, problems)
		require.NotEmpty(t, pieces)
		var got []byte
		for i, p := range pieces {
			require.NotEmpty(t, p, "piece %d of %d is empty", i, len(pieces))
			require.LessOrEqual(t, len(p), maxStreamPiece, "piece %d of %d", i, len(pieces))
			if i < len(pieces)-1 {
				require.GreaterOrEqual(t, len(p), capture.LinePieceBytes, "piece %d of %d is short", i, len(pieces))
				require.NotContains(t, string(p), "\n", "piece %d of %d", i, len(pieces))
			}
			got = append(got, p...)
		}
		last := pieces[len(pieces)-1]
		require.True(t, bytes.HasSuffix(last, []byte("}\n")), "the last piece ends the line")
		if string(got) != line {
			i := 0
			for i < len(got) && i < len(line) && got[i] == line[i] {
				i++
			}
			require.Failf(t, "WriteTo differs from AppendTo", "lengths %d vs %d, first difference at byte %d: %q vs %q",
				len(got), len(line), i, got[max(0, i-20):min(len(got), i+20)], line[max(0, i-20):min(len(line), i+20)])
		}
		t.Logf("%d bytes in %d pieces, largest %d", len(got), len(pieces), slices.Max(pieceSizes(pieces)))
		if len(line) > 2*capture.LinePieceBytes {
			assert.Greater(t, len(pieces), 1, "a large line comes in pieces")
		}
	}
}

func pieceSizes(pieces [][]byte) []int {
	out := make([]int, len(pieces))
	for i, p := range pieces {
		out[i] = len(p)
	}
	return out
}

// TestSpanLineWriteToCapturetestCases: every canonical span of the conformance suite.
func TestSpanLineWriteToCapturetestCases(t *testing.T) {
	for _, c := range capturetest.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			checkWriteTo(t, streamCase{
				kvs: c.Span.Attributes, start: c.Span.Start, end: c.Span.End,
				traceID: c.Span.TraceID.String(), spanID: c.Span.SpanID.String(),
				wantLine: c.Line,
			})
		})
	}
}

// TestSpanLineWriteToLargePayloads: large payloads with special bytes at and around every window
// and piece boundary, bodies that are compact, spaced, invalid or not objects, and cut payloads.
func TestSpanLineWriteToLargePayloads(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	obj := largeObject(300<<10, r)
	spaced := spacedObject(t, obj)
	require.NotEqual(t, obj, spaced)
	deep := strings.Repeat(`{"a":`, capture.PayloadMaxDepth+1) + `"` + strings.Repeat("x", 200<<10) + `"` + strings.Repeat("}", capture.PayloadMaxDepth+1)
	sse := func(size, shift int) string { return boundaryText(size, sseFiller, shift) }

	tests := []streamCase{
		{name: "SSE response_raw 200 KiB", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(200<<10, 0), -1))},
		{name: "SSE response_raw 1.5 MiB", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(1536<<10, 1), -1))},
		{name: "control characters response_raw 700 KiB (six-fold growth)", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, boundaryText(700<<10, controlFiller, 2), -1))},
		{name: "ill-formed UTF-8 request_raw 500 KiB (three-fold growth)", kvs: spanKVs(payloadKV(semconv.GymtraceRequestRawKey, boundaryText(500<<10, invalidFiller, 3), -1))},
		{name: "multibyte response_raw 400 KiB", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, boundaryText(400<<10, multibyteFiller, 4), -1))},
		{name: "both raw texts", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestRawKey, boundaryText(300<<10, multibyteFiller+controlFiller, 5), -1),
			payloadKV(semconv.GymtraceResponseRawKey, sse(900<<10, 6), -1))},
		{name: "compact request body 300 KiB", kvs: spanKVs(payloadKV(semconv.GymtraceRequestBodyKey, obj, -1))},
		{name: "compact response body 300 KiB with raw", kvs: spanKVs(
			payloadKV(semconv.GymtraceResponseBodyKey, obj, -1),
			payloadKV(semconv.GymtraceResponseRawKey, sse(250<<10, 7), -1))},
		{name: "spaced response body (valid, not compact)", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, spaced, -1))},
		{name: "spaced request body and compact response body", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestBodyKey, spaced, -1),
			payloadKV(semconv.GymtraceResponseBodyKey, obj, -1))},
		{name: "invalid JSON response body (truncated)", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, obj[:len(obj)-1], -1)), wantProblems: 1},
		{name: "invalid JSON request body (control character deep inside)", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestBodyKey, obj[:200<<10]+"\x01"+obj[200<<10:], -1)), wantProblems: 1},
		{name: "invalid spaced body", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, spaced+" x", -1)), wantProblems: 1},
		{name: "body that is an array", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, "["+obj+"]", -1)), wantProblems: 1},
		{name: "body that is a string", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, string(ojson.AppendString(nil, obj)), -1)), wantProblems: 1},
		{name: "body with leading space", kvs: spanKVs(payloadKV(semconv.GymtraceRequestBodyKey, " "+obj, -1)), wantProblems: 1},
		{name: "empty body", kvs: spanKVs(payloadKV(semconv.GymtraceRequestBodyKey, "", -1), payloadKV(semconv.GymtraceResponseRawKey, sse(200<<10, 8), -1)), wantProblems: 1},
		{name: "body nested too deep", kvs: spanKVs(payloadKV(semconv.GymtraceResponseBodyKey, deep, -1)), wantProblems: 1},
		{name: "cut response_raw (size disagrees)", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestBodyKey, obj, -1),
			payloadKV(semconv.GymtraceResponseRawKey, sse(300<<10, 9), 300<<10+17)), wantProblems: 1},
		{name: "cut request body (size disagrees)", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestBodyKey, obj[:100<<10], len(obj)),
			payloadKV(semconv.GymtraceResponseRawKey, sse(300<<10, 10), -1)), wantProblems: 1},
		{name: "payload missing, size present", kvs: append(spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(300<<10, 11), -1)),
			semconv.GymtraceResponseBodySizeKey.Int(1234)), wantProblems: 1},
		{name: "every payload large, one of each problem", kvs: spanKVs(
			payloadKV(semconv.GymtraceRequestBodyKey, spaced, -1),
			payloadKV(semconv.GymtraceRequestRawKey, sse(200<<10, 12), 5),
			payloadKV(semconv.GymtraceResponseBodyKey, obj[:len(obj)-2], -1),
			payloadKV(semconv.GymtraceResponseRawKey, boundaryText(600<<10, controlFiller+multibyteFiller+invalidFiller, 13), -1)), wantProblems: 2},
		{name: "no trace or span id", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(200<<10, 14), -1)), noIDs: true},
		{name: "mistyped payload is an error", kvs: append(spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(200<<10, 15), -1)),
			semconv.GymtraceRequestBodyKey.Int(3))},
		{name: "missing model call id is an error", kvs: spanKVs(payloadKV(semconv.GymtraceResponseRawKey, sse(200<<10, 16), -1))[1:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkWriteTo(t, tt)
		})
	}
	t.Run("every shift of the specials", func(t *testing.T) {
		for shift := range len(streamSpecials) + 4 {
			checkWriteTo(t, streamCase{kvs: spanKVs(
				payloadKV(semconv.GymtraceRequestRawKey, boundaryText(130<<10, multibyteFiller+"a", shift), -1),
				payloadKV(semconv.GymtraceResponseRawKey, boundaryText(140<<10, sseFiller, shift+1), -1))})
		}
	})
}

// TestSpanLineWriteToEmitError: emit's first error stops the output and is returned; the pieces
// before it are the line's beginning.
func TestSpanLineWriteToEmitError(t *testing.T) {
	boom := errors.New("disk on fire")
	a := kvLookup(spanKVs(payloadKV(semconv.GymtraceResponseRawKey, boundaryText(600<<10, sseFiller, 0), -1)))
	line, _, err := capture.AppendLineFromAttributes(nil, a, streamStart, streamEnd, streamTraceID, streamSpanID)
	require.NoError(t, err)
	all, _ := writeToPieces(t, streamCase{kvs: a, start: streamStart, end: streamEnd, traceID: streamTraceID, spanID: streamSpanID}, nil)
	require.Greater(t, len(all), 3)
	for _, failAt := range []int{0, 1, len(all) / 2, len(all) - 1} {
		t.Run(fmt.Sprintf("fail at piece %d of %d", failAt+1, len(all)), func(t *testing.T) {
			l, err := capture.NewSpanLine(a, streamStart, streamEnd, streamTraceID, streamSpanID)
			require.NoError(t, err)
			var got []byte
			calls := 0
			_, err = l.WriteTo(nil, func(p []byte) error {
				calls++
				if calls-1 == failAt {
					return boom
				}
				got = append(got, p...)
				return nil
			})
			require.ErrorIs(t, err, boom)
			assert.Equal(t, failAt+1, calls, "no piece after the failing one")
			assert.True(t, bytes.HasPrefix(line, got), "the pieces before the error are the line's beginning")
			assert.Less(t, len(got), len(line))
		})
	}
}

// TestSpanLineBufferReuse: the buffer WriteTo returns serves the next line.
func TestSpanLineBufferReuse(t *testing.T) {
	var buf []byte
	for i, size := range []int{300 << 10, 10, 1 << 20, 200 << 10} {
		a := kvLookup(spanKVs(payloadKV(semconv.GymtraceResponseRawKey, boundaryText(size+1, sseFiller, i), -1)))
		want, _, err := capture.AppendLineFromAttributes(nil, a, streamStart, streamEnd, streamTraceID, streamSpanID)
		require.NoError(t, err)
		l, err := capture.NewSpanLine(a, streamStart, streamEnd, streamTraceID, streamSpanID)
		require.NoError(t, err)
		var got []byte
		buf, err = l.WriteTo(buf, func(p []byte) error { got = append(got, p...); return nil })
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "line %d", i)
		require.Empty(t, buf)
	}
	assert.LessOrEqual(t, cap(buf), 2*maxStreamPiece, "the buffer holds a piece, not a line")
}

// fuzzPayload grows a fuzzed payload to about size bytes by repeating it.
func fuzzPayload(s string, size int) string {
	if s == "" || len(s) >= size {
		return s
	}
	return strings.Repeat(s, size/len(s)+1)
}

func FuzzSpanLineWriteTo(f *testing.F) {
	f.Add(`{"a":"b"}`, "x\"\n", `{ "c" : [1, 2] }`, "data: é\xff\n\n", uint8(70), uint8(3))
	f.Add(`{"a":1}`, "", "[1]", "\x00\x01東🙂", uint8(200), uint8(0))
	f.Add("", "\xf0\x9f\x98", "{}", "\xe6\x97\xe6", uint8(33), uint8(1))
	f.Fuzz(func(t *testing.T, reqBody, reqRaw, respBody, respRaw string, kib, mode uint8) {
		size := int(kib) << 9 // up to 127.5 KiB: past two windows and a piece
		if mode&1 != 0 && reqBody != "" {
			// A large valid object around the fuzzed body, if the body is a value.
			reqBody = `{"r":[` + strings.TrimSuffix(fuzzPayload(reqBody+",", size), ",") + `]}`
		}
		if mode&2 != 0 && respBody != "" {
			respBody = `{"s":` + string(ojson.AppendString(nil, fuzzPayload(respBody, size))) + ", \"t\":" + respBody + "}"
		}
		kvs := headKVs()
		for i, p := range []struct {
			k attribute.Key
			v string
		}{
			{semconv.GymtraceRequestBodyKey, reqBody},
			{semconv.GymtraceRequestRawKey, fuzzPayload(reqRaw, size)},
			{semconv.GymtraceResponseBodyKey, respBody},
			{semconv.GymtraceResponseRawKey, fuzzPayload(respRaw, size)},
		} {
			if p.v == "" && mode&(4<<i) == 0 {
				continue
			}
			sz := -1
			if mode&0x40 != 0 && i == int(kib)%4 {
				sz = len(p.v) + 1 // cut
			}
			kvs = append(kvs, payloadKV(p.k, p.v, sz)...)
		}
		a := kvLookup(kvs)
		want, wantProblems, err := capture.AppendLineFromAttributes(nil, a, streamStart, streamEnd, streamTraceID, streamSpanID)
		if err != nil {
			t.Fatalf("AppendLineFromAttributes: %v", err)
		}
		l, err := capture.NewSpanLine(a, streamStart, streamEnd, streamTraceID, streamSpanID)
		if err != nil {
			t.Fatalf("NewSpanLine: %v", err)
		}
		var got []byte
		var sizes []int
		if _, err := l.WriteTo(nil, func(p []byte) error {
			got = append(got, p...)
			sizes = append(sizes, len(p))
			return nil
		}); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("WriteTo differs from AppendLineFromAttributes (%d vs %d bytes)", len(got), len(want))
		}
		if gotProblems := l.Problems(); len(gotProblems) != len(wantProblems) || gotProblems.Error() != wantProblems.Error() {
			t.Fatalf("problems %v, want %v", gotProblems, wantProblems)
		}
		for i, n := range sizes {
			if n > maxStreamPiece || (i < len(sizes)-1 && n < capture.LinePieceBytes) {
				t.Fatalf("piece %d of %d has %d bytes", i, len(sizes), n)
			}
		}
	})
}
