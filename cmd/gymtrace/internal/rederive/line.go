package rederive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// Record keys Line reads or writes (SPEC §3.1).
const (
	keyDialect     = "dialect"
	keyStatus      = "status_code"
	keyCategory    = "error_category"
	keyResponse    = "response"
	keyResponseRaw = "response_raw"
)

// Error categories Line treats specially (SPEC §3.3).
const (
	catStreamTruncated = "stream_truncated"
	catParseError      = "capture_parse_error"
	catIncomplete      = "incomplete"
	catUpstreamError   = "upstream_error"
	catException       = "exception"
)

// Result is what [Line] did to one record.
type Result struct {
	// Line is the record to write, without "\n": the input itself unless Changed, else the input with
	// response, error_category and possibly response_raw replaced.
	Line    []byte
	Changed bool
	// ResponseChanged reports a rebuilt response; ResponseRawDropped that response_raw was removed
	// (a non-stream body that is now a JSON object).
	ResponseChanged, ResponseRawDropped bool
	OldCategory, NewCategory            string // error_category before and after ("" = null)
	SSE                                 bool   // the record was taken as a server-sent event stream
	ModelCallID                         string // the record's model_call_id, "" when not a string
	// Skipped, when not "", says why the record was copied without looking at its response
	// (e.g. "no response_raw", "exception path"): a reason, not an error.
	Skipped string
}

// Line rederives one capture record, one JSON object (surrounding whitespace ignored), by the rules
// of the package doc. The error reports a line that is not a JSON object.
func Line(line []byte) (Result, error) {
	line = bytes.TrimSpace(line)
	l, err := rolloutline.Parse(line)
	if err != nil {
		return Result{Line: line}, fmt.Errorf("rederive: %w", err)
	}
	res := Result{Line: line}
	res.ModelCallID, _ = getString(&l, "model_call_id")
	rawText, ok := getString(&l, keyResponseRaw)
	if !ok {
		res.Skipped = "no response_raw"
		return res, nil
	}
	dialect, ok := getString(&l, keyDialect)
	if !ok {
		res.Skipped = "dialect is not a string"
		return res, nil
	}
	status, ok := getStatus(&l)
	if !ok {
		res.Skipped = "status_code is not an integer or null"
		return res, nil
	}
	cat, ok := getCategory(&l)
	if !ok {
		res.Skipped = "error_category is not a string or null"
		return res, nil
	}
	res.OldCategory, res.NewCategory = cat, cat
	if cat == catException {
		res.Skipped = "exception path (response null by rule)"
		return res, nil
	}
	statusErr := status != nil && *status >= 400
	transport := ""
	switch cat {
	case capture.TransportCancelled, capture.TransportConnection, capture.TransportTimeout:
		if !statusErr {
			transport = cat
		}
	}
	oldResp, oldNull := getResponse(&l)
	raw := []byte(rawText)

	// Was it a stream? See the package doc.
	var nonSSEObj json.RawMessage
	sse := (cat == catStreamTruncated && !statusErr && transport == "") || !oldNull
	if !sse {
		nonSSEObj, _ = capture.ResponsePayload(raw)
		if nonSSEObj == nil {
			sse = framesEvents(raw)
		}
	}
	res.SSE = sse
	if !sse && oldNull && nonSSEObj != nil && bytes.ContainsRune(raw, utf8.RuneError) {
		// The writer replaced the body's ill-formed UTF-8 with U+FFFD (SPEC §3.1 #13, §0 D6): a
		// body that is an object now may not have been one as the upstream sent it.
		res.Skipped = "response_raw holds U+FFFD (ill-formed UTF-8 the writer replaced, SPEC D6): the bytes the response was judged on are gone"
		return res, nil
	}

	newResp := nonSSEObj // nil for a stream
	terminal := stream.TerminalNone
	if sse {
		c, err := stream.NewCapture(dialect)
		if err != nil {
			res.Skipped = "unknown dialect " + fmt.Sprintf("%q", dialect)
			return res, nil
		}
		c.Feed(raw)
		terminal = c.Close(transport == "")
		if obj, ok := c.Response(); ok {
			newResp = obj
		}
	}

	newCat := cat
	if recomputable(cat, statusErr) && transport == "" {
		newCat = capture.Category(capture.CategoryInput{
			Status:       status,
			Terminal:     terminal.String(),
			SSE:          sse,
			BodyNonEmpty: len(raw) > 0,
			ResponseNull: newResp == nil,
		})
	}
	res.NewCategory = newCat

	dropRaw := !sse && newResp != nil
	respChanged := !bytes.Equal(oldResp, newResp) && !(oldNull && newResp == nil)
	if !respChanged && !dropRaw && newCat == cat {
		return res, nil
	}
	if respChanged {
		v := []byte("null")
		if newResp != nil {
			v = newResp
		}
		if err := l.Set(keyResponse, v); err != nil {
			return res, fmt.Errorf("rederive: response: %w", err)
		}
		res.ResponseChanged = true
	}
	if newCat != cat {
		v := []byte("null")
		if newCat != "" {
			v = ojson.AppendString(nil, newCat)
		}
		if err := l.Set(keyCategory, v); err != nil {
			return res, fmt.Errorf("rederive: error_category: %w", err)
		}
	}
	out := l.Bytes()
	if dropRaw {
		out = withoutKey(&l, keyResponseRaw)
		res.ResponseRawDropped = true
	}
	res.Line, res.Changed = out, true
	return res, nil
}

// recomputable reports whether a category follows from the response bytes alone (the package doc).
func recomputable(cat string, statusErr bool) bool {
	switch cat {
	case "", catStreamTruncated, catParseError, catIncomplete:
		return !statusErr
	case catUpstreamError:
		return !statusErr // with a status ≥ 500 it is status-based
	}
	return false
}

// framesEvents reports whether body, framed as server-sent events, dispatches at least one event.
func framesEvents(body []byte) bool {
	n := 0
	d := stream.NewDecoder(func(stream.Event) { n++ })
	d.Feed(body)
	d.Close()
	return n > 0
}

// getString returns the string value of key; ok is false when it is absent, null or not a string.
func getString(l *rolloutline.Line, key string) (string, bool) {
	raw, ok := l.Get(key)
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// getStatus returns status_code: nil for absent or null; ok is false for anything but an integral
// JSON number within int range.
func getStatus(l *rolloutline.Line) (*int, bool) {
	raw, ok := l.Get(keyStatus)
	if !ok || string(raw) == "null" {
		return nil, true
	}
	var f float64
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &f) != nil {
		return nil, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return nil, false
	}
	n := int(f)
	return &n, true
}

// getCategory returns error_category ("" for absent or null); ok is false for another JSON type.
func getCategory(l *rolloutline.Line) (string, bool) {
	raw, ok := l.Get(keyCategory)
	if !ok || string(raw) == "null" {
		return "", true
	}
	return getString(l, keyCategory)
}

// getResponse returns the compact text of response and whether it is null (or absent).
func getResponse(l *rolloutline.Line) (json.RawMessage, bool) {
	raw, ok := l.Get(keyResponse)
	if !ok || string(raw) == "null" {
		return nil, true
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw, false
	}
	return b.Bytes(), false
}

// withoutKey returns l as a compact JSON object without key (every occurrence); other members keep
// their order and text, a repeated key its first position and last value.
func withoutKey(l *rolloutline.Line, key string) []byte {
	out := []byte{'{'}
	seen := make(map[string]bool)
	for _, k := range l.Keys() {
		if k == key || seen[k] {
			continue
		}
		seen[k] = true
		v, _ := l.Get(k)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = ojson.AppendString(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}')
}
