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

// terminalCase is one vectors/terminal.json case; the file's `eof` key is not in
// testvectors.Case, so the file is decoded here.
type terminalCase struct {
	Name  string `json:"name"`
	Input struct {
		Dialect string   `json:"dialect"`
		Chunks  []string `json:"chunks"`
	} `json:"input"`
	Expected  *string `json:"expected"`
	Deviation string  `json:"deviation"`
	EOF       string  `json:"eof"`
}

// detectTerminal feeds chunks in order to a Capture of dialect, closes the body (cleanly when
// cleanEOF) and returns the terminal state.
func detectTerminal(t *testing.T, dialect string, chunks [][]byte, cleanEOF bool) Terminal {
	t.Helper()
	c, err := NewCapture(dialect)
	require.NoError(t, err)
	for _, p := range chunks {
		c.Feed(p)
	}
	return c.Close(cleanEOF)
}

func loadTerminalCases(t *testing.T) []terminalCase {
	t.Helper()
	testvectors.Load(t, "terminal.json") // fails when missing or empty
	b, err := os.ReadFile(filepath.Join(testvectors.Dir(t, "vectors"), "terminal.json"))
	require.NoError(t, err)
	var f struct {
		Cases []terminalCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.NotEmpty(t, f.Cases)
	return f.Cases
}

func wantTerminal(t *testing.T, s *string) Terminal {
	t.Helper()
	if s == nil {
		return TerminalNone
	}
	switch *s {
	case "complete":
		return TerminalComplete
	case "incomplete":
		return TerminalIncomplete
	case "error":
		return TerminalError
	}
	t.Fatalf("unknown expected terminal %q", *s)
	return TerminalNone
}

// lineEndings returns the LF, CRLF and CR forms of an SSE text (every line end rewritten).
func lineEndings(s string) map[string]string {
	norm := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return map[string]string{
		"LF":   norm,
		"CRLF": strings.ReplaceAll(norm, "\n", "\r\n"),
		"CR":   strings.ReplaceAll(norm, "\n", "\r"),
	}
}

// firstTerminalByte feeds body one byte at a time and returns the index of the byte whose Feed
// first reported a terminal state (-1 when none did) and the state after Close.
func firstTerminalByte(t *testing.T, dialect string, body []byte, clean bool) (int, Terminal) {
	t.Helper()
	c, err := NewCapture(dialect)
	require.NoError(t, err)
	at := -1
	for i := range body {
		if c.Feed(body[i:i+1]) != TerminalNone && at < 0 {
			at = i
		}
	}
	return at, c.Close(clean)
}

func TestTerminalVectors(t *testing.T) {
	cases := loadTerminalCases(t)
	require.Len(t, cases, 38)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			want := wantTerminal(t, tc.Expected)
			clean := tc.EOF == "clean"
			var chunks [][]byte
			for _, c := range tc.Input.Chunks {
				chunks = append(chunks, []byte(c))
			}
			// Incremental over the given chunks, as the middleware sees them.
			assert.Equal(t, want, detectTerminal(t, tc.Input.Dialect, chunks, clean), "given chunks")

			body := strings.Join(tc.Input.Chunks, "")
			variants := map[string]string{"as given": body}
			for k, v := range lineEndings(body) {
				variants[k] = v
			}
			for vname, v := range variants {
				at, final := firstTerminalByte(t, tc.Input.Dialect, []byte(v), clean)
				require.Equal(t, want, final, "%s: byte by byte", vname)
				// Split at every offset: the first piece reports the terminal exactly when it
				// holds the byte that completed the terminal event.
				for k := 0; k <= len(v); k++ {
					c, err := NewCapture(tc.Input.Dialect)
					require.NoError(t, err)
					first := c.Feed([]byte(v[:k]))
					if at >= 0 && k > at {
						require.NotEqual(t, TerminalNone, first, "%s: split at %d", vname, k)
					} else {
						require.Equal(t, TerminalNone, first, "%s: split at %d", vname, k)
					}
					c.Feed([]byte(v[k:]))
					require.Equal(t, want, c.Close(clean), "%s: split at %d", vname, k)
				}
			}
		})
	}
}

// TestTerminalD8OnlyAtCleanEOF pins that D8 and a final event without its blank line count only
// when the body ended cleanly.
func TestTerminalD8OnlyAtCleanEOF(t *testing.T) {
	tests := []struct {
		name    string
		dialect string
		body    string
		clean   Terminal
		unclean Terminal
	}{
		{"D8 finished chat", DialectChat, `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n", TerminalComplete, TerminalNone},
		{"D8 finish in final event without blank line", DialectChat, `data: {"choices":[{"finish_reason":"length"}]}`, TerminalComplete, TerminalNone},
		{"D8 empty finish_reason", DialectChat, `data: {"choices":[{"finish_reason":""}]}` + "\n\n", TerminalNone, TerminalNone},
		{"D8 no choices", DialectChat, `data: {"choices":[]}` + "\n\n", TerminalNone, TerminalNone},
		{"D8 index default 0 merges with 0", DialectChat, `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n" + `data: {"choices":[{"finish_reason":"stop"}]}` + "\n\n", TerminalComplete, TerminalNone},
		{"D8 not for messages", DialectMessages, `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}` + "\n\n", TerminalNone, TerminalNone},
		{"[DONE] without blank line", DialectChat, "data: [DONE]", TerminalComplete, TerminalNone},
		{"message_stop without blank line", DialectMessages, "event: message_stop\n", TerminalComplete, TerminalNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := [][]byte{[]byte(tt.body)}
			assert.Equal(t, tt.clean, detectTerminal(t, tt.dialect, chunks, true), "clean EOF")
			assert.Equal(t, tt.unclean, detectTerminal(t, tt.dialect, chunks, false), "unclean EOF")
		})
	}
}

func TestTerminalRules(t *testing.T) {
	tests := []struct {
		name    string
		dialect string
		body    string
		want    Terminal
	}{
		{"chat pretty-printed error object over several data lines", DialectChat, "data: {\ndata:  \"error\": {\"message\": \"x\"}\ndata: }\n\n", TerminalError},
		{"chat [DONE] on a later data line", DialectChat, "data: x\ndata: [DONE]\n\n", TerminalComplete},
		{"chat error key spelled with an escape", DialectChat, "data: {\"choices\":[]}\ndata: {\"\\u0065rror\":1}\n\n", TerminalError},
		{"chat duplicate error key, last null", DialectChat, `data: {"error":1,"error":null}` + "\n\n", TerminalNone},
		{"chat error in non-strict JSON is not read", DialectChat, `data: {"error":NaN}` + "\n\n", TerminalNone},
		{"responses D1 needs no event field at all", DialectResponses, "event:\ndata: {\"type\":\"response.completed\"}\n\n", TerminalNone},
		{"responses D1 type must be a string", DialectResponses, `data: {"type":["response.completed"]}` + "\n\n", TerminalNone},
		{"responses event name wins over data type", DialectResponses, "event: response.failed\ndata: {\"type\":\"response.completed\"}\n\n", TerminalError},
		{"messages event error with non-JSON data", DialectMessages, "event: error\ndata: oops\n\n", TerminalError},
		{"messages error after message_stop: first wins", DialectMessages, "event: message_stop\n\nevent: error\n\n", TerminalComplete},
		{"BOM before the terminal event", DialectMessages, "\uFEFFevent: message_stop\n\n", TerminalComplete},
		{"invalid UTF-8 inside D1 data still parses", DialectMessages, "data: {\"type\":\"message_stop\",\"x\":\"\xff\"}\n\n", TerminalComplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, detectTerminal(t, tt.dialect, [][]byte{[]byte(tt.body)}, false))
		})
	}
}

func TestTerminalString(t *testing.T) {
	assert.Equal(t, "", TerminalNone.String())
	assert.Equal(t, "complete", TerminalComplete.String())
	assert.Equal(t, "incomplete", TerminalIncomplete.String())
	assert.Equal(t, "error", TerminalError.String())
	assert.Equal(t, "", Terminal(99).String())
}

func reassembleVector(t *testing.T, dialect string, pieces ...[]byte) ([]byte, bool) {
	t.Helper()
	c, err := NewCapture(dialect)
	require.NoError(t, err)
	for _, p := range pieces {
		c.Feed(p)
	}
	c.Close(true)
	return c.Response()
}

func TestReassemblyVectors(t *testing.T) {
	cases := testvectors.Load(t, "reassembly.json")
	require.Len(t, cases, 33)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var in struct {
				Dialect string `json:"dialect"`
				SSE     string `json:"sse"`
			}
			require.NoError(t, json.Unmarshal(tc.Input, &in))
			var want []byte
			wantOK := string(tc.Expected) != "null"
			if wantOK {
				want = []byte(testvectors.Canonical(t, tc.Expected))
			}
			got, ok := Reassemble(in.Dialect, []byte(in.SSE))
			require.Equal(t, wantOK, ok)
			require.Equal(t, string(want), string(got))

			variants := map[string]string{"as given": in.SSE}
			for k, v := range lineEndings(in.SSE) {
				variants[k] = v
			}
			for vname, v := range variants {
				got, ok := reassembleVector(t, in.Dialect, bytePieces([]byte(v))...)
				require.Equal(t, wantOK, ok, "%s: byte by byte", vname)
				require.Equal(t, string(want), string(got), "%s: byte by byte", vname)
				for k := 0; k <= len(v); k++ {
					got, ok := reassembleVector(t, in.Dialect, []byte(v[:k]), []byte(v[k:]))
					require.Equal(t, wantOK, ok, "%s: split at %d", vname, k)
					require.Equal(t, string(want), string(got), "%s: split at %d", vname, k)
				}
			}
		})
	}
}
