package stream

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

type conformanceExpected struct {
	Dialect string `json:"dialect"`
	Record  struct {
		StatusCode    int     `json:"status_code"`
		ErrorCategory *string `json:"error_category"`
	} `json:"record"`
	ResponseChecks map[string]json.RawMessage `json:"response_checks"`
}

// terminalForCategory maps a conformance record's error_category to the terminal state this
// package must report for it (SPEC §3.3, §4.7, D3, D5, D8): null → complete; the categories that
// come from a terminal event → that state; the end-of-body categories → none.
func terminalForCategory(t *testing.T, cat *string) Terminal {
	t.Helper()
	if cat == nil {
		return TerminalComplete
	}
	switch *cat {
	case "upstream_error":
		return TerminalError
	case "incomplete":
		return TerminalIncomplete
	case "stream_truncated", "cancelled", "connection":
		return TerminalNone
	}
	t.Fatalf("no terminal mapping for error_category %q", *cat)
	return TerminalNone
}

// pointer resolves an RFC 6901 JSON pointer in v.
func pointer(v ojson.Value, ptr string) (ojson.Value, bool) {
	if ptr == "" {
		return v, true
	}
	if ptr[0] != '/' {
		return ojson.Value{}, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v.Kind() {
		case ojson.KindObject:
			var ok bool
			if v, ok = v.Get(tok); !ok {
				return ojson.Value{}, false
			}
		case ojson.KindArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= v.Len() {
				return ojson.Value{}, false
			}
			v = v.Elems()[i]
		default:
			return ojson.Value{}, false
		}
	}
	return v, true
}

func readJSONFile(t *testing.T, path string, v any) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
	return true
}

// TestConformanceSSE runs every conformance case with an upstream.sse through a Capture, split
// at the case's chunking offsets when it has them, cut where the client or the upstream breaks
// off, and checks the terminal state and every response_checks pointer.
func TestConformanceSSE(t *testing.T) {
	ran := 0
	for _, dir := range testvectors.ConformanceCases(t) {
		body, err := os.ReadFile(filepath.Join(dir, "upstream.sse"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		ran++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var exp conformanceExpected
			require.True(t, readJSONFile(t, filepath.Join(dir, "expected.json"), &exp))
			var chunking struct {
				Offsets []int `json:"offsets"`
			}
			readJSONFile(t, filepath.Join(dir, "chunking.json"), &chunking)
			var client struct {
				DisconnectAfterEvents int `json:"disconnect_after_events"`
			}
			readJSONFile(t, filepath.Join(dir, "client_behavior.json"), &client)
			// The break's delay_s (testvectors.UpstreamBehavior.Delay) only paces a real
			// connection; a Capture fed in one goroutine sees the same bytes and then the break.
			upstream := testvectors.ReadUpstreamBehavior(t, dir)

			clean := true
			if client.DisconnectAfterEvents > 0 {
				body = cutAfterEvents(t, body, client.DisconnectAfterEvents)
				clean = false
			}
			if upstream != nil {
				require.Less(t, upstream.AbortAfterBytes, len(body))
				body = body[:upstream.AbortAfterBytes]
				clean = false
			}
			pieces := splitAt(t, body, chunking.Offsets)

			c, err := NewCapture(exp.Dialect)
			require.NoError(t, err)
			for _, p := range pieces {
				c.Feed(p)
			}
			want := terminalForCategory(t, exp.Record.ErrorCategory)
			assert.Equal(t, want, c.Close(clean), "terminal")
			assert.Zero(t, c.Stats().BoundHits)

			// A case without response_checks expects no response (070: no event at all;
			// 074: an error event and no message, SPEC §4.3, §4.6).
			got, ok := c.Response()
			require.Equal(t, len(exp.ResponseChecks) > 0, ok, "a response is reassembled: %s", got)
			if ok {
				gotV, err := ojson.Parse(got)
				require.NoError(t, err)
				for ptr, raw := range exp.ResponseChecks {
					wantV, err := ojson.Parse(raw)
					require.NoError(t, err)
					v, ok := pointer(gotV, ptr)
					require.True(t, ok, "pointer %s missing in %s", ptr, got)
					assert.True(t, wantV.Equal(v), "pointer %s: got %s want %s", ptr, v, wantV)
				}
			}

			// The same body in one piece and byte by byte gives the same response.
			for name, ps := range map[string][][]byte{"whole": {body}, "bytes": bytePieces(body)} {
				c2, err := NewCapture(exp.Dialect)
				require.NoError(t, err)
				for _, p := range ps {
					c2.Feed(p)
				}
				assert.Equal(t, want, c2.Close(clean), name)
				got2, _ := c2.Response()
				assert.Equal(t, string(got), string(got2), name)
			}
		})
	}
	require.Greater(t, ran, 20, "conformance SSE cases")
}

// cutAfterEvents returns body up to the end of its n-th event (its closing blank line).
func cutAfterEvents(t *testing.T, body []byte, n int) []byte {
	t.Helper()
	norm := bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	require.Equal(t, len(body), len(norm), "cutAfterEvents expects LF line ends")
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.Index(body[off:], []byte("\n\n"))
		require.GreaterOrEqual(t, j, 0, "body has fewer than %d events", n)
		off += j + 2
	}
	require.Less(t, off, len(body), "the cut must leave events unsent")
	return body[:off]
}

// splitAt cuts body at the given byte offsets (ascending, within the body).
func splitAt(t *testing.T, body []byte, offsets []int) [][]byte {
	t.Helper()
	var out [][]byte
	prev := 0
	for _, o := range offsets {
		require.GreaterOrEqual(t, o, prev)
		require.LessOrEqual(t, o, len(body))
		out = append(out, body[prev:o])
		prev = o
	}
	return append(out, body[prev:])
}
