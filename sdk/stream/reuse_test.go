package stream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// This file checks that parsing events into reused memory (Capture's ojson.Parser) changes
// nothing: every stream gives the same terminal states, response and counters as with each event's
// tree deep-copied before it is folded in (Capture.cloneEvents), which depends on no reuse. The
// parser zeroes and reuses its memory at each event, so a value the reassembly kept without a
// clone would show another event's data here.

// captureResult is everything a Capture reports about one body.
type captureResult struct {
	feedTerm  []Terminal
	final     Terminal
	response  string
	hasResult bool
	stats     Stats
}

func runCapture(t testing.TB, dialect string, pieces [][]byte, clean, cloneEvents bool) captureResult {
	t.Helper()
	c, err := NewCapture(dialect)
	require.NoError(t, err)
	c.cloneEvents = cloneEvents
	var r captureResult
	for _, p := range pieces {
		r.feedTerm = append(r.feedTerm, c.Feed(p))
	}
	r.final = c.Close(clean)
	resp, ok := c.Response()
	r.response, r.hasResult, r.stats = string(resp), ok, c.Stats()
	return r
}

func requireSameWithoutReuse(t *testing.T, dialect string, pieces [][]byte, clean bool) {
	t.Helper()
	got := runCapture(t, dialect, pieces, clean, false)
	want := runCapture(t, dialect, pieces, clean, true)
	require.Equal(t, want, got)
}

// retainedValueStreams keep values of every kind (objects, arrays, strings, numbers) from early
// events, followed by events whose parse reuses the memory those values came from.
var retainedValueStreams = []struct {
	name, dialect, body string
}{
	{"chat object model, role, finish, usage, tool id and name", DialectChat, sse(
		`{"id":"c","model":{"name":"m","rev":[1,2]},"choices":[{"index":0,"delta":{"role":{"r":"assistant"},"content":"a","tool_calls":[{"index":0,"id":["x",{"y":1}],"function":{"name":{"n":"f"},"arguments":"{"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"b","tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"finish_reason":{"why":["stop"]}}],"usage":{"prompt_tokens":1,"details":{"cached":[0]}}}`,
		`{"id":"c2","choices":[{"index":1,"delta":{"content":"zz","role":"user"},"finish_reason":"length"}],"extra":{"a":{"b":{"c":[1,2,3,4,5,6,7,8]}}}}`,
		`{"choices":[],"filler":[{"k":"v"},{"k":"w"},{"k":[1,{"deep":true}]}]}`,
		`[DONE]`)},
	{"chat content parts and object arguments (D13)", DialectChat, sse(
		`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t"}]},{"type":"text","text":"a"}],"tool_calls":[{"index":0,"id":7,"function":{"name":"f","arguments":{"q":[1.50,{"r":"s"}]}}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":{"o":[2]},"reasoning":["x"],"tool_calls":[{"index":0,"function":{"arguments":[true,null]}}]}}],"filler":[{"k":"v"},{"k":[1,{"deep":true}]}]}`,
		`{"choices":[],"filler":[{"q":[9,9,9,9]},{"r":{"s":"t"}}]}`,
		`[DONE]`)},
	{"messages nested blocks, usage and stop reason", DialectMessages,
		"event: message_start\ndata: " + `{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":{"family":"claude","v":[4,5]},"stop_reason":null,"usage":{"input_tokens":3,"cache":{"read":[1]}}}}` + "\n\n" +
			"event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s1","input":{"q":{"nested":["a","b"]}}}}` + "\n\n" +
			"event: content_block_start\ndata: " + `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}` + "\n\n" +
			"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": [1, 2"}}` + "\n\n" +
			"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"]}"}}` + "\n\n" +
			"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
			"event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":{"kind":["tool_use"]}},"usage":{"output_tokens":7,"cache":{"write":[2]}}}` + "\n\n" +
			"event: ping\ndata: " + `{"type":"ping","filler":[{"a":1},{"b":[2,3,{"c":4}]}]}` + "\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
	{"responses response objects then other events", DialectResponses,
		"event: response.created\ndata: " + `{"type":"response.created","response":{"id":"r","output":[],"usage":null,"meta":{"a":[1,{"b":2}]}}}` + "\n\n" +
			"event: response.output_text.delta\ndata: " + `{"type":"response.output_text.delta","delta":"x","filler":[{"k":[1,2,3]},{"k":{"l":"m"}}]}` + "\n\n" +
			"event: response.in_progress\ndata: " + `{"type":"response.in_progress","response":{"id":"r","status":"in_progress","output":[{"type":"message","content":[{"text":"x"}]}]}}` + "\n\n" +
			"event: response.output_text.delta\ndata: " + `{"type":"response.output_text.delta","delta":"y","filler":[{"k":[4,5,6]},{"k":{"l":"n"}}]}` + "\n\n"},
}

func TestCaptureReuseChangesNothing(t *testing.T) {
	t.Run("retained values", func(t *testing.T) {
		for _, s := range retainedValueStreams {
			t.Run(s.name, func(t *testing.T) {
				body := []byte(s.body)
				requireSameWithoutReuse(t, s.dialect, [][]byte{body}, true)
				requireSameWithoutReuse(t, s.dialect, bytePieces(body), false)
				got := runCapture(t, s.dialect, [][]byte{body}, true, false)
				require.True(t, got.hasResult)
				assert.NotContains(t, got.response, "filler", "no other event's data in the response")
			})
		}
	})
	t.Run("reassembly vectors", func(t *testing.T) {
		cases := testvectors.Load(t, "reassembly.json")
		require.NotEmpty(t, cases)
		for _, tc := range cases {
			var in struct {
				Dialect string `json:"dialect"`
				SSE     string `json:"sse"`
			}
			require.NoError(t, json.Unmarshal(tc.Input, &in))
			requireSameWithoutReuse(t, in.Dialect, [][]byte{[]byte(in.SSE)}, true)
			requireSameWithoutReuse(t, in.Dialect, bytePieces([]byte(in.SSE)), true)
		}
	})
	t.Run("terminal vectors", func(t *testing.T) {
		for _, tc := range loadTerminalCases(t) {
			var chunks [][]byte
			for _, c := range tc.Input.Chunks {
				chunks = append(chunks, []byte(c))
			}
			requireSameWithoutReuse(t, tc.Input.Dialect, chunks, tc.EOF == "clean")
		}
	})
	t.Run("conformance bodies", func(t *testing.T) {
		ran := 0
		for _, dir := range testvectors.ConformanceCases(t) {
			body, err := os.ReadFile(filepath.Join(dir, "upstream.sse"))
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			var exp conformanceExpected
			require.True(t, readJSONFile(t, filepath.Join(dir, "expected.json"), &exp))
			requireSameWithoutReuse(t, exp.Dialect, [][]byte{body}, true)
			ran++
		}
		require.Greater(t, ran, 20)
	})
	t.Run("benchmark streams", func(t *testing.T) {
		for _, dialect := range []string{DialectChat, DialectMessages, DialectResponses} {
			for _, shape := range reassemblyShapes {
				requireSameWithoutReuse(t, dialect, reassemblyStream(dialect, shape), true)
			}
		}
	})
}

// TestCaptureAllocationsPerEvent bounds what one more event costs once the stream is under way:
// the copy of its data that the parsed strings share, and the growth of the reassembled text.
func TestCaptureAllocationsPerEvent(t *testing.T) {
	for _, dialect := range []string{DialectChat, DialectMessages, DialectResponses} {
		t.Run(dialect, func(t *testing.T) {
			events := reassemblyStream(dialect, "text")
			delta := events[len(events)/2]
			c, err := NewCapture(dialect)
			require.NoError(t, err)
			for _, e := range events[:len(events)/2] {
				c.Feed(e)
			}
			allocs := testing.AllocsPerRun(500, func() { c.Feed(delta) })
			assert.LessOrEqual(t, allocs, 1.5, "allocations per delta event")
		})
	}
}

func FuzzCaptureReuse(f *testing.F) {
	for _, s := range retainedValueStreams {
		f.Add(s.dialect, []byte(s.body), uint8(7))
	}
	f.Add(DialectChat, []byte(strings.Join([]string{sse(`{"model":[1],"choices":[{"delta":{"role":{"a":1}}}]}`), sse(`{"x":[{},{}]}`)}, "")), uint8(1))
	f.Fuzz(func(t *testing.T, dialect string, body []byte, step uint8) {
		if parseDialect(dialect) == dialectUnknown {
			return
		}
		n := int(step%32) + 1
		var pieces [][]byte
		for i := 0; i < len(body); i += n {
			pieces = append(pieces, body[i:min(i+n, len(body))])
		}
		got := runCapture(t, dialect, pieces, step%2 == 0, false)
		want := runCapture(t, dialect, pieces, step%2 == 0, true)
		if !assert.ObjectsAreEqual(want, got) {
			t.Fatalf("with reuse %+v\nwithout %+v", got, want)
		}
	})
}
