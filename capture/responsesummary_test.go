package capture

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file checks that the span attributes read from a response summary (responseSummary, used
// when message content is off) are exactly those read from the whole parsed response.

// responseReadings is everything the attributes read from a response.
type responseReadings struct {
	attrs     []string
	compacted bool
}

func readResponse(v ojson.Value, ok bool, conv semconv.GenAIConventions) responseReadings {
	var r responseReadings
	if !ok {
		return r
	}
	for _, kv := range appendResponseAttributes(nil, v, conv) {
		r.attrs = append(r.attrs, string(kv.Key)+"="+kv.Value.Emit()+":"+kv.Value.Type().String())
	}
	r.compacted = responseCompacted(v)
	return r
}

func checkSummaryMatchesWhole(t testing.TB, resp []byte) (whole responseReadings) {
	t.Helper()
	for _, conv := range []semconv.GenAIConventions{semconv.GenAIConventionsV1_41, semconv.GenAIConventionsLatestExperimental} {
		v, ok := responseForAttributes(resp, true)
		whole = readResponse(v, ok, conv)
		v, ok = validResponseSummary(resp)
		summary := readResponse(v, ok, conv)
		if !assert.ObjectsAreEqual(whole, summary) {
			t.Fatalf("response %s:\nwhole   %+v\nsummary %+v", resp, whole, summary)
		}
	}
	return whole
}

// jsonObjects returns the text of every object in the JSON files under dir (recursively), as
// AppendJSON writes it and, for top-level objects, as the file has it.
func jsonObjects(t *testing.T, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	var walk func(v ojson.Value)
	walk = func(v ojson.Value) {
		switch v.Kind() {
		case ojson.KindObject:
			out = append(out, v.AppendJSON(nil))
			for _, m := range v.Members() {
				walk(m.Value)
			}
		case ojson.KindArray:
			for _, e := range v.Elems() {
				walk(e)
			}
		case ojson.KindString:
			// Vectors keep payloads as JSON text inside strings.
			if s, _ := v.AsString(); strings.HasPrefix(s, "{") {
				if inner, err := ojson.Parse([]byte(s)); err == nil {
					walk(inner)
				}
			}
		}
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if v, perr := ojson.Parse(b); perr == nil {
			out = append(out, b)
			walk(v)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// randomResponse builds a response object from pieces that exercise the summary's rules: the read
// members in every JSON type, duplicates, escaped keys, arrays with non-object elements, nested
// choices and items, and large text the summary skips.
func randomResponse(r *rand.Rand) []byte {
	values := []string{
		`null`, `true`, `0`, `-1.5e3`, `"stop"`, `""`, `"compaction"`, `[]`, `{}`, `[1,"x",null]`,
		`{"reason":"max_tokens"}`, `{"reason":""}`, `{"reason":{"x":1}}`,
		`{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}`,
		`{"input_tokens":3,"cache_read_input_tokens":1,"cache_creation_input_tokens":2,"output_tokens":5}`,
		`"` + strings.Repeat(`long text \n \u00e9 \"q\" `, 50) + `"`,
	}
	keys := []string{"id", "model", "stop_reason", "usage", "incomplete_details", "choices", "output", "content", "other", `\u0069d`, `mod\u0065l`, "finish_reason", "type"}
	val := func() string { return values[r.IntN(len(values))] }
	item := func() string {
		switch r.IntN(6) {
		case 0:
			return val()
		case 1:
			return `{"index":0,"message":{"role":"assistant","content":` + val() + `},"finish_reason":` + val() + `}`
		case 2:
			return `{"type":` + val() + `,"type":` + val() + `,"content":[{"type":"compaction"}]}`
		case 3:
			return `{"fin\u0069sh_reason":"length","t\u0079pe":"compaction"}`
		default:
			return `{"finish_reason":` + val() + `,"type":` + val() + `}`
		}
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range r.IntN(8) {
		if i > 0 {
			b.WriteString(",")
		}
		if r.IntN(3) == 0 {
			b.WriteString(" \n")
		}
		fmt.Fprintf(&b, `"%s":`, keys[r.IntN(len(keys))])
		if r.IntN(2) == 0 {
			b.WriteString("[")
			for j := range r.IntN(4) {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(item())
			}
			b.WriteString("]")
		} else {
			b.WriteString(val())
		}
	}
	b.WriteString("}")
	return []byte(b.String())
}

func TestResponseSummaryMatchesWholeResponse(t *testing.T) {
	t.Run("objects of the vectors and conformance cases", func(t *testing.T) {
		objs := append(jsonObjects(t, testvectors.Dir(t, "vectors")), jsonObjects(t, testvectors.Dir(t, "conformance"))...)
		require.Greater(t, len(objs), 1000)
		for _, o := range objs {
			checkSummaryMatchesWhole(t, o)
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		withAttrs, compacted := 0, 0
		for range 20_000 {
			w := checkSummaryMatchesWhole(t, randomResponse(r))
			if len(w.attrs) > 0 {
				withAttrs++
			}
			if w.compacted {
				compacted++
			}
		}
		assert.Greater(t, withAttrs, 2000, "responses with attributes")
		assert.Greater(t, compacted, 500, "responses with compaction")
	})
	t.Run("not strict JSON or not an object", func(t *testing.T) {
		for _, s := range []string{``, `[1]`, `"s"`, `{"id":"x",}`, `{"id":NaN}`, "{\"id\":\"\xff\"}", `{"id":"x"} {}`, ` {"id":"x"} `} {
			checkSummaryMatchesWhole(t, []byte(s))
		}
	})
}

func FuzzResponseSummary(f *testing.F) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 16 {
		f.Add(randomResponse(r))
	}
	f.Fuzz(func(t *testing.T, resp []byte) {
		checkSummaryMatchesWhole(t, resp)
	})
}

func TestResponseSummaryAllocations(t *testing.T) {
	e := Exchange{
		ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: "chat", LatencyMS: 1,
		Response: []byte(perfChatCompletion(perfWords(3300))),
	}
	whole := testing.AllocsPerRun(20, func() { _ = ExchangeAttributes(&e, WithMessageContent(true)) })
	lean := testing.AllocsPerRun(20, func() { _ = ExchangeAttributes(&e) })
	assert.Less(t, lean, whole)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		_ = ExchangeAttributes(&e)
	}
	runtime.ReadMemStats(&after)
	perRun := int64(after.TotalAlloc-before.TotalAlloc) / runs
	assert.Less(t, perRun, int64(len(e.Response))*3/2, "a copy for the payload attribute, not the parsed text")
}
