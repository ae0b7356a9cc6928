package capture

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

func intPtr(i int) *int { return &i }

func TestClassifyVectors(t *testing.T) {
	counts := map[string]int{}
	for _, c := range testvectors.Load(t, "error_category.json") {
		t.Run(c.Name, func(t *testing.T) {
			fn, _ := vecField(t, c.Input, "fn").AsString()
			counts[fn]++
			want := ""
			if s, ok := testvectors.Value(t, c.Expected).AsString(); ok {
				want = s
			}
			switch fn {
			case "classify_status":
				status, ok := vecField(t, c.Input, "status").Int64()
				require.True(t, ok)
				assert.Equal(t, want, ClassifyStatus(int(status)))
			case "classify_exception":
				name, _ := vecField(t, c.Input, "class_name").AsString()
				isTimeout, _ := vecField(t, c.Input, "is_timeout_error").AsBool()
				assert.Equal(t, want, ClassifyException(name, isTimeout))
			case "exchange":
				checkExchangeCategory(t, c.Input, c.Expected)
			default:
				t.Fatalf("unknown fn %q", fn)
			}
		})
	}
	assert.Equal(t, 21, counts["classify_status"])
	assert.Equal(t, 15, counts["classify_exception"])
	assert.Equal(t, 30, counts["exchange"])
}

// checkExchangeCategory replays one error_category.json exchange through the capture pieces this
// package owns: status, payload split and Category. SSE reassembly belongs to sdk/stream, so for
// SSE responses the vector's response_is_null is taken as the reassembly's result; terminal
// detection uses the small test detector below (SPEC §4.2 with D1/D8).
func checkExchangeCategory(t *testing.T, input, expected []byte) {
	in := testvectors.Value(t, input)
	want := testvectors.Value(t, expected)
	dialect := dialectOfPath(t, mustString(t, get(in, "path")))
	contentType := mustString(t, get(in, "content_type"))
	var body []byte
	for _, ch := range get(in, "chunks").Elems() {
		body = append(body, mustString(t, ch)...)
	}
	var status *int
	if s, ok := get(in, "status").Int64(); ok {
		status = intPtr(int(s))
	}
	sse := strings.HasPrefix(contentType, "text/event-stream")
	ci := CategoryInput{SSE: sse, BodyNonEmpty: len(body) > 0}
	var respNull, rawPresent bool

	if raises := get(in, "raises"); !raises.IsNull() {
		// Exception path (SPEC §3.3, §3.4): the exception-derived status when none was sent; the
		// response is null and any body seen is response_raw.
		if r := get(raises, "response"); r.Kind() == ojson.KindObject {
			if status == nil {
				if s, ok := get(r, "status_code").Int64(); ok {
					status = intPtr(int(s))
				}
			}
			if content, ok := get(r, "content").AsString(); ok && content != "<raises>" && len(body) == 0 {
				body = []byte(content)
			}
		}
		ci.Transport = ClassifyException(mustString(t, get(raises, "class_name")), false)
		ci.BodyNonEmpty = len(body) > 0
		respNull, rawPresent = true, len(body) > 0
	} else if sse {
		ci.Terminal = testTerminal(t, dialect, body)
		respNull, _ = get(want, "response_is_null").AsBool()
		rawPresent = len(body) > 0
	} else {
		obj, raw := ResponsePayload(body)
		respNull, rawPresent = obj == nil, raw != nil
	}
	ci.Status = status
	ci.ResponseNull = respNull

	wantStatus := vecInt64(t, get(want, "status_code"))
	if wantStatus == nil {
		assert.Nil(t, status)
	} else {
		require.NotNil(t, status)
		assert.Equal(t, int(*wantStatus), *status)
	}
	wantCat, _ := get(want, "error_category").AsString()
	assert.Equal(t, wantCat, Category(ci))
	wantNull, _ := get(want, "response_is_null").AsBool()
	assert.Equal(t, wantNull, respNull)
	wantRaw, _ := get(want, "response_raw_present").AsBool()
	assert.Equal(t, wantRaw, rawPresent)
}

func mustString(t *testing.T, v ojson.Value) string {
	t.Helper()
	s, ok := v.AsString()
	require.True(t, ok, "not a string: %s", v)
	return s
}

func dialectOfPath(t *testing.T, path string) string {
	t.Helper()
	switch {
	case strings.HasSuffix(path, "/v1/responses"):
		return "responses"
	case strings.HasSuffix(path, "/v1/chat/completions"):
		return "chat"
	case strings.HasSuffix(path, "/v1/messages"):
		return "messages"
	}
	t.Fatalf("no dialect for %s", path)
	return ""
}

// testTerminal is a minimal terminal detector for LF-framed test streams (the product's lives in
// sdk/stream): SPEC §4.2 by event name, D1 by data type without an event line, D8 for chat streams
// whose every choice finished.
func testTerminal(t *testing.T, dialect string, body []byte) string {
	t.Helper()
	terminals := map[string]map[string]string{
		"responses": {"response.completed": TerminalComplete, "response.incomplete": TerminalIncomplete, "response.failed": TerminalError, "error": TerminalError},
		"messages":  {"message_stop": TerminalComplete, "error": TerminalError},
		"chat":      {"error": TerminalError},
	}[dialect]
	finished := map[int64]bool{}
	for _, block := range strings.Split(string(body), "\n\n") {
		event, hasEvent := "", false
		var data []string
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event, hasEvent = strings.TrimSpace(value), true
			case "data":
				data = append(data, value)
			}
		}
		if hasEvent {
			if term, ok := terminals[event]; ok {
				return term
			}
		}
		if len(data) == 0 {
			continue
		}
		payload := strings.Join(data, "\n")
		if dialect == "chat" && payload == "[DONE]" {
			return TerminalComplete
		}
		v, err := ojson.Parse([]byte(payload))
		if err != nil || v.Kind() != ojson.KindObject {
			continue
		}
		if typ, ok := get(v, "type").AsString(); ok && !hasEvent && dialect != "chat" {
			if term, ok := terminals[typ]; ok {
				return term
			}
		}
		if dialect == "chat" {
			if !get(v, "error").IsNull() {
				return TerminalError
			}
			for _, ch := range get(v, "choices").Elems() {
				idx, ok := get(ch, "index").Int64()
				if !ok {
					idx = 0
				}
				fr, _ := get(ch, "finish_reason").AsString()
				finished[idx] = finished[idx] || fr != ""
			}
		}
	}
	if dialect == "chat" && len(finished) > 0 {
		for _, done := range finished {
			if !done {
				return ""
			}
		}
		return TerminalComplete
	}
	return ""
}

func TestCategoryPrecedence(t *testing.T) {
	tests := []struct {
		name string
		in   CategoryInput
		want string
	}{
		{"clean 200", CategoryInput{Status: intPtr(200), BodyNonEmpty: true}, ""},
		{"status wins over cancel", CategoryInput{Status: intPtr(503), Transport: TransportCancelled, SSE: true}, "upstream_error"},
		{"status wins over terminal error", CategoryInput{Status: intPtr(429), Terminal: TerminalError, SSE: true}, "rate_limit"},
		{"cancelled before status (D3)", CategoryInput{Transport: TransportCancelled}, "cancelled"},
		{"cancel after 200 beats terminal", CategoryInput{Status: intPtr(200), Transport: TransportCancelled, Terminal: TerminalComplete, SSE: true}, "cancelled"},
		{"connection after status (D5)", CategoryInput{Status: intPtr(200), Transport: TransportConnection, SSE: true}, "connection"},
		{"dial timeout (D5)", CategoryInput{Transport: TransportTimeout}, "timeout"},
		{"unknown transport is exception", CategoryInput{Transport: "weird"}, "exception"},
		{"terminal error", CategoryInput{Status: intPtr(200), SSE: true, Terminal: TerminalError, ResponseNull: true, BodyNonEmpty: true}, "upstream_error"},
		{"terminal incomplete", CategoryInput{Status: intPtr(200), SSE: true, Terminal: TerminalIncomplete}, "incomplete"},
		{"sse without terminal (D5)", CategoryInput{Status: intPtr(200), SSE: true, BodyNonEmpty: true, ResponseNull: true}, "stream_truncated"},
		{"empty sse without terminal", CategoryInput{Status: intPtr(200), SSE: true}, "stream_truncated"},
		{"bounded sse without terminal (D15)", CategoryInput{Status: intPtr(200), SSE: true, BodyNonEmpty: true, ResponseNull: true, Bounded: true}, ""},
		{"bounded json prefix (D15)", CategoryInput{Status: intPtr(200), BodyNonEmpty: true, ResponseNull: true, Bounded: true}, ""},
		{"bounded keeps the status (D15)", CategoryInput{Status: intPtr(500), SSE: true, Bounded: true}, "upstream_error"},
		{"bounded keeps the transport (D15)", CategoryInput{Status: intPtr(200), SSE: true, Transport: TransportConnection, Bounded: true}, "connection"},
		{"bounded keeps the terminal (D15)", CategoryInput{Status: intPtr(200), SSE: true, Terminal: TerminalIncomplete, Bounded: true}, "incomplete"},
		{"D8 chat complete", CategoryInput{Status: intPtr(200), SSE: true, Terminal: TerminalComplete, BodyNonEmpty: true}, ""},
		{"complete but unreassemblable", CategoryInput{Status: intPtr(200), SSE: true, Terminal: TerminalComplete, BodyNonEmpty: true, ResponseNull: true}, "capture_parse_error"},
		{"non-JSON body", CategoryInput{Status: intPtr(200), BodyNonEmpty: true, ResponseNull: true}, "capture_parse_error"},
		{"empty body", CategoryInput{Status: intPtr(200), ResponseNull: true}, ""},
		{"no status no transport", CategoryInput{}, ""},
		{"3xx not an error", CategoryInput{Status: intPtr(304)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Category(tc.in))
		})
	}
}
