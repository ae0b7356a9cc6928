package capture

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// lineViaExchange is the reference for AppendLineFromAttributes: ExchangeFromAttributes, then the
// trace ids, then AppendJSON.
func lineViaExchange(dst []byte, a AttributeLookup, start, end time.Time, traceID, spanID string) ([]byte, Problems, error) {
	e, problems, err := ExchangeFromAttributes(a, start, end)
	if err != nil {
		return dst, nil, err
	}
	e.TraceID, e.SpanID = traceID, spanID
	return e.AppendJSON(dst), problems, nil
}

func requireSameLine(t *testing.T, kvs []attribute.KeyValue, start, end time.Time) {
	t.Helper()
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	a := newAttrMap(kvs)
	prefix := []byte("previous line\n")
	want, wantProblems, wantErr := lineViaExchange(append([]byte(nil), prefix...), a, start, end, traceID, spanID)
	got, gotProblems, gotErr := AppendLineFromAttributes(append([]byte(nil), prefix...), a, start, end, traceID, spanID)
	require.Equal(t, wantErr, gotErr)
	require.Equal(t, string(want), string(got))
	require.Equal(t, wantProblems, gotProblems)
}

func TestAppendLineFromAttributesMatchesExchange(t *testing.T) {
	start := time.Unix(1786032154, 123456700)
	end := start.Add(842700 * time.Microsecond)
	t.Run("golden records", func(t *testing.T) {
		for name, line := range goldenLines(t) {
			e := exchangeFromLine(t, line)
			s, err := TimeFromUnixSeconds(e.StartedAt)
			require.NoError(t, err)
			en, err := TimeFromUnixSeconds(e.CompletedAt)
			require.NoError(t, err)
			t.Run(name, func(t *testing.T) { requireSameLine(t, ExchangeAttributes(&e), s, en) })
		}
	})
	t.Run("benchmark calls", func(t *testing.T) {
		for _, c := range perfCases() {
			e := c.exchange()
			t.Run(c.name, func(t *testing.T) { requireSameLine(t, ExchangeAttributes(&e), start, end) })
		}
	})
	t.Run("payload problems in every field", func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		deep := strings.Repeat(`{"a":`, PayloadMaxDepth+1) + "1" + strings.Repeat("}", PayloadMaxDepth+1)
		for range 3000 {
			kvs := []attribute.KeyValue{
				semconv.GymtraceModelCallIDKey.String("id1"),
				semconv.GymtraceDialectKey.String("chat"),
				semconv.GymtraceLatencyMSKey.Float64(1.5),
			}
			for _, k := range payloadKeys {
				kvs = append(kvs, randomPayload(r, k, deep)...)
			}
			r.Shuffle(len(kvs), func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] })
			requireSameLine(t, kvs, start, end)
		}
	})
	t.Run("errors leave dst unchanged", func(t *testing.T) {
		for _, kvs := range [][]attribute.KeyValue{
			{semconv.GymtraceDialectKey.String("chat"), semconv.GymtraceLatencyMSKey.Float64(1)},
			{semconv.GymtraceModelCallIDKey.String("i"), semconv.GymtraceDialectKey.String("chat"), semconv.GymtraceLatencyMSKey.Float64(1), semconv.GymtraceResponseRawSizeKey.String("3")},
			{semconv.GymtraceModelCallIDKey.String("i"), semconv.GymtraceDialectKey.String("chat"), semconv.GymtraceLatencyMSKey.Float64(1), semconv.GymtraceRequestBodyKey.Int64(3)},
		} {
			requireSameLine(t, kvs, start, end)
			got, _, err := AppendLineFromAttributes([]byte("x"), newAttrMap(kvs), start, end, "", "")
			assert.Error(t, err)
			assert.Equal(t, "x", string(got))
		}
	})
}

// randomPayload returns the attributes of one payload field in one of the states a span can carry.
func randomPayload(r *rand.Rand, k attribute.Key, deep string) []attribute.KeyValue {
	sk := sizeKey(k)
	texts := []string{
		`{"a":1,"b":[true,null,"x\n\u00e9"]}`, "{ \"a\" : [ 1 , 2 ] }\n", `[1]`, `{"a":NaN}`, `{"a":1`, ``, `{}`, "\t{}", deep,
		"plain text, not JSON", "{\"a\":\"\xff\"}",
	}
	s := texts[r.IntN(len(texts))]
	switch r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []attribute.KeyValue{k.String(s)}
	case 2:
		return []attribute.KeyValue{k.String(s), sk.Int64(int64(len(s)))}
	case 3:
		return []attribute.KeyValue{k.String(s), sk.Int64(int64(len(s) + 1))} // cut
	default:
		return []attribute.KeyValue{sk.Int64(int64(len(s)))} // stripped
	}
}

func TestAppendLineFromAttributesAllocations(t *testing.T) {
	start := time.Unix(1786032154, 123456700)
	end := start.Add(842700 * time.Microsecond)
	for _, c := range perfCases() {
		e := c.exchange()
		a := newAttrMap(ExchangeAttributes(&e))
		line := e.AppendJSON(nil)
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, 0, 2*len(line))
			allocs := testing.AllocsPerRun(20, func() {
				if _, _, err := AppendLineFromAttributes(buf[:0], a, start, end, "", ""); err != nil {
					t.Fatal(err)
				}
			})
			// The record's small pointers (model_ref, latency_ttft_ms, status_code, a raw
			// payload's string header), never a copy of a payload.
			assert.LessOrEqual(t, allocs, 4.0)
		})
	}
}

func BenchmarkAppendLineFromAttributes(b *testing.B) {
	start := time.Unix(1786032154, 123456700)
	end := start.Add(842700 * time.Microsecond)
	for _, c := range perfCases() {
		e := c.exchange()
		a := newAttrMap(ExchangeAttributes(&e))
		line := e.AppendJSON(nil)
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, len(line))
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				var err error
				if buf, _, err = AppendLineFromAttributes(buf[:0], a, start, end, "", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
