package capture

import (
	"bytes"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file checks that the response facts read in the validating pass (responseFacts, the
// handler's PayloadFacts) give exactly the span attributes read from the whole parsed response
// (wholeReadings, the reference: what the attributes were before the one-pass reading).

// responseReadings is everything the attributes read from a response.
type responseReadings struct {
	attrs     []string
	compacted bool
}

func attrTexts(kvs []attribute.KeyValue) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, string(kv.Key)+"="+kv.Value.Emit()+":"+kv.Value.Type().String())
	}
	return out
}

// wholeReadings reads the attributes from the parsed response, member by member.
func wholeReadings(resp []byte, conv semconv.GenAIConventions) responseReadings {
	v, err := ojson.Parse(resp)
	if err != nil || v.Kind() != ojson.KindObject {
		return responseReadings{}
	}
	var kvs []attribute.KeyValue
	if id, ok := get(v, "id").AsString(); ok {
		kvs = append(kvs, semconv.GenAIResponseID(id))
	}
	if m, ok := get(v, "model").AsString(); ok && m != "" {
		kvs = append(kvs, semconv.GenAIResponseModel(m))
	}
	var fr []string
	if s, ok := get(v, "stop_reason").AsString(); ok && s != "" {
		fr = append(fr, s)
	}
	if ch := get(v, "choices"); ch.Kind() == ojson.KindArray {
		for _, c := range ch.Elems() {
			if s, ok := get(c, "finish_reason").AsString(); ok && s != "" {
				fr = append(fr, s)
			}
		}
	}
	if s, ok := get(get(v, "incomplete_details"), "reason").AsString(); ok && s != "" {
		fr = append(fr, s)
	}
	if len(fr) > 0 {
		kvs = append(kvs, semconv.GenAIResponseFinishReasons(fr...))
	}
	if u, ok := v.Get("usage"); ok {
		kvs = appendUsageAttributes(kvs, u.AppendJSON(nil), conv)
	}
	return responseReadings{
		attrs:     attrTexts(kvs),
		compacted: hasTyped(get(v, "output").Elems(), compactionType) || hasTyped(get(v, "content").Elems(), compactionType),
	}
}

// factReadings reads the attributes from the facts of the one validating pass.
func factReadings(resp []byte, conv semconv.GenAIConventions) responseReadings {
	var pf PayloadFacts
	if !pf.readResponse(resp) {
		return responseReadings{}
	}
	f := &pf.resp
	return responseReadings{attrs: attrTexts(appendResponseAttributes(nil, f, pf.respUsage, conv)), compacted: f.Compacted}
}

func checkFactsMatchWhole(t testing.TB, resp []byte) (whole responseReadings) {
	t.Helper()
	for _, conv := range []semconv.GenAIConventions{semconv.GenAIConventionsV1_41, semconv.GenAIConventionsLatestExperimental} {
		whole = wholeReadings(resp, conv)
		facts := factReadings(resp, conv)
		if !assert.ObjectsAreEqual(whole, facts) {
			t.Fatalf("response %s:\nwhole %+v\nfacts %+v", resp, whole, facts)
		}
		var pf PayloadFacts
		obj, _ := pf.ResponsePayload(resp)
		if obj == nil {
			continue
		}
		f, usage, ok := pf.response(obj)
		require.True(t, ok)
		split := responseReadings{attrs: attrTexts(appendResponseAttributes(nil, f, usage, conv)), compacted: f.Compacted}
		if !assert.ObjectsAreEqual(whole, split) {
			t.Fatalf("response %s:\nwhole %+v\nsplit %+v", resp, whole, split)
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

// randomResponse builds a response object from pieces that exercise the facts' rules: the read
// members in every JSON type, duplicates, escaped keys, arrays with non-object elements, nested
// choices and items, and large text the walk only validates.
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

func TestResponseFactsMatchWholeResponse(t *testing.T) {
	t.Run("objects of the vectors and conformance cases", func(t *testing.T) {
		objs := append(jsonObjects(t, testvectors.Dir(t, "vectors")), jsonObjects(t, testvectors.Dir(t, "conformance"))...)
		require.Greater(t, len(objs), 1000)
		for _, o := range objs {
			checkFactsMatchWhole(t, o)
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		withAttrs, compacted := 0, 0
		for range 20_000 {
			w := checkFactsMatchWhole(t, randomResponse(r))
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
	t.Run("usage with more members and detail objects than the walk keeps inline", func(t *testing.T) {
		// The walk keeps the usage members and the detail objects' members in fixed arrays while
		// they fit: the detail objects read first must keep their counts when later ones spill.
		var b strings.Builder
		b.WriteString(`{"usage":{"prompt_tokens_details":{"cached_tokens":7,"audio_tokens":1},"input_tokens_details":{"cached_tokens":9}`)
		for i := range 12 {
			fmt.Fprintf(&b, `,"extra_%d":{"a":%d,"b":%d,"c":[1]}`, i, i, i+1)
		}
		b.WriteString(`,"completion_tokens_details":{"reasoning_tokens":5},"prompt_tokens":31,"completion_tokens":11}}`)
		w := checkFactsMatchWhole(t, []byte(b.String()))
		assert.Contains(t, w.attrs, "gen_ai.usage.cache_read.input_tokens=7:INT64")
		assert.Contains(t, w.attrs, "gen_ai.usage.reasoning.output_tokens=5:INT64")
	})
	t.Run("not strict JSON or not an object", func(t *testing.T) {
		for _, s := range []string{``, `[1]`, `"s"`, `{"id":"x",}`, `{"id":NaN}`, "{\"id\":\"\xff\"}", `{"id":"x"} {}`, ` {"id":"x"} `} {
			checkFactsMatchWhole(t, []byte(s))
		}
	})
}

func FuzzResponseFacts(f *testing.F) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 16 {
		f.Add(randomResponse(r))
	}
	f.Fuzz(func(t *testing.T, resp []byte) {
		checkFactsMatchWhole(t, resp)
	})
}

func TestResponseFactsAllocations(t *testing.T) {
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

// requestKeys are the members appendRequestAttributes reads, by requestParams field.
var requestKeys = []string{"model", "stream", "temperature", "top_p", "top_k", "max_tokens", "max_output_tokens",
	"max_completion_tokens", "seed", "frequency_penalty", "presence_penalty", "n", "stop", "stop_sequences",
	"previous_response_id", "reasoning", "reasoning_effort", "output_config"}

// wholeRequestReadings reads the request attributes from the parsed request: each member's last
// value, re-encoded, and the compaction rule after the old text probe.
func wholeRequestReadings(req []byte, conv semconv.GenAIConventions) responseReadings {
	v, err := ojson.Parse(req)
	if err != nil || v.Kind() != ojson.KindObject {
		return responseReadings{}
	}
	var p requestParams
	for _, k := range requestKeys {
		if m, ok := v.Get(k); ok {
			p.Visit(1, []byte(`"`+k+`"`), m.AppendJSON(nil))
		}
	}
	compact, err := ojson.Compact(nil, req)
	if err != nil {
		panic(err) // Parse accepted it
	}
	return responseReadings{
		attrs:     attrTexts(appendRequestAttributes(nil, &p, conv)),
		compacted: requestCompacted(compact, bytes.Contains(compact, []byte(`"compaction"`)), &v),
	}
}

// factRequestReadings reads them from the facts of the one validating pass.
func factRequestReadings(req []byte, conv semconv.GenAIConventions) responseReadings {
	var f PayloadFacts
	obj, _ := f.RequestPayload(req)
	p, hint, ok := f.request(obj)
	if !ok {
		return responseReadings{}
	}
	return responseReadings{attrs: attrTexts(appendRequestAttributes(nil, p, conv)), compacted: requestCompacted(obj, hint, nil)}
}

func randomRequest(r *rand.Rand) []byte {
	values := []string{`null`, `true`, `false`, `0`, `1`, `2`, `-1.5e3`, `0.7`, `1e400`, `18446744073709551615`, `"m"`, `""`,
		`"compaction"`, `"compactio\u006e"`, `"say \"compaction"`, `["a",1,"b"]`, `[]`, `{"effort":"high"}`, `{"effort":""}`,
		`[{"type":"compaction"}]`, `[{"role":"user","content":[{"type":"compaction"}]}]`, `[{"type":"compactio\u006e"}]`}
	keys := append([]string{"input", "messages", `mod\u0065l`, "other"}, requestKeys...)
	var b strings.Builder
	b.WriteString("{")
	for i := range r.IntN(10) {
		if i > 0 {
			b.WriteString(",")
		}
		if r.IntN(4) == 0 {
			b.WriteString("\n ")
		}
		fmt.Fprintf(&b, `"%s":%s`, keys[r.IntN(len(keys))], values[r.IntN(len(values))])
	}
	b.WriteString("}")
	return []byte(b.String())
}

func TestRequestFactsMatchWholeRequest(t *testing.T) {
	check := func(req []byte) (compacted, withAttrs bool) {
		for _, conv := range []semconv.GenAIConventions{semconv.GenAIConventionsV1_41, semconv.GenAIConventionsLatestExperimental} {
			whole, facts := wholeRequestReadings(req, conv), factRequestReadings(req, conv)
			if !assert.ObjectsAreEqual(whole, facts) {
				t.Fatalf("request %s:\nwhole %+v\nfacts %+v", req, whole, facts)
			}
			compacted, withAttrs = whole.compacted, len(whole.attrs) > 0
		}
		return compacted, withAttrs
	}
	t.Run("objects of the vectors and conformance cases", func(t *testing.T) {
		for _, o := range append(jsonObjects(t, testvectors.Dir(t, "vectors")), jsonObjects(t, testvectors.Dir(t, "conformance"))...) {
			check(o)
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		compacted, withAttrs := 0, 0
		for range 20_000 {
			c, a := check(randomRequest(r))
			if c {
				compacted++
			}
			if a {
				withAttrs++
			}
		}
		assert.Greater(t, compacted, 200, "requests with compaction")
		assert.Greater(t, withAttrs, 5000, "requests with attributes")
	})
}
