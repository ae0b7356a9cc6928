package fakemodel_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Name string
	Data string
}

// parseSSE splits a text/event-stream body into events (LF framing, as the Server writes it).
// It fails the test on a line that is neither "event:" nor "data:".
func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n\n"), "stream must end with a blank line: %q", tail(body))
	var events []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var ev sseEvent
		var data []string
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			default:
				require.Failf(t, "unexpected SSE line", "%q", line)
			}
		}
		require.Len(t, data, 1, "one data line per event: %q", block)
		ev.Data = data[0]
		events = append(events, ev)
	}
	return events
}

func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

// names returns the event names (or, for unnamed events, the data's "type", "[DONE]" or "chunk"),
// with runs of the same name collapsed into one entry suffixed "+".
func names(t *testing.T, events []sseEvent) []string {
	t.Helper()
	var out []string
	for _, ev := range events {
		n := ev.Name
		if n == "" {
			n = "chunk"
			if ev.Data == "[DONE]" {
				n = "[DONE]"
			}
		}
		if len(out) > 0 && strings.TrimSuffix(out[len(out)-1], "+") == n {
			out[len(out)-1] = n + "+"
			continue
		}
		out = append(out, n)
	}
	return out
}

// decode parses JSON into a generic value, keeping numbers as json.Number.
func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "JSON: %s", s)
	return v
}

// object parses a JSON object.
func object(t *testing.T, s string) map[string]any {
	t.Helper()
	m, ok := decode(t, s).(map[string]any)
	require.True(t, ok, "not an object: %s", s)
	return m
}

// keys returns the top-level keys of a JSON object in document order.
func keys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		out = append(out, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return out
}

// num returns the integer at a path of nested objects / arrays (string keys, int indexes).
func num(t *testing.T, v any, path ...any) int64 {
	t.Helper()
	n, ok := at(t, v, path...).(json.Number)
	require.True(t, ok, "not a number at %v", path)
	i, err := n.Int64()
	require.NoError(t, err)
	return i
}

// str returns the string at a path.
func str(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, ok := at(t, v, path...).(string)
	require.True(t, ok, "not a string at %v: %v", path, at(t, v, path...))
	return s
}

// at walks a path of object keys (string) and array indexes (int).
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "not an object before %q", p)
			v, ok = m[p]
			require.True(t, ok, "missing key %q", p)
		case int:
			a, ok := v.([]any)
			require.True(t, ok, "not an array before [%d]", p)
			require.Less(t, p, len(a))
			v = a[p]
		}
	}
	return v
}

// do sends a request to h and returns the recorded response.
func do(t *testing.T, h http.Handler, method, path string, body any, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, "http://fake"+path, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// bodyOf reads a response body.
func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return string(b)
}
