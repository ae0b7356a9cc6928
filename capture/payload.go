package capture

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"

	"github.com/gymtrace/gymtrace/ojson"
)

// PayloadMaxDepth is the deepest nesting a request or response body may have to be stored as an
// object; deeper bodies are kept as text in request_raw/response_raw. It keeps every capture line
// within the nesting Gym's reader accepts (the line adds one level; orjson reads at most 1024), and
// it is also about where the reference's own json.loads gives up (SPEC §8 #35).
const PayloadMaxDepth = 1000

// RequestPayload splits a request body into the record's request/request_raw pair (SPEC §3.1,
// §0 D6):
//   - empty body → (nil, nil): request null, no request_raw;
//   - a strict JSON object (RFC 8259, UTF-8 without BOM, no NaN/Infinity, 64-bit integers, nesting
//     at most [PayloadMaxDepth]) → (the body with only insignificant whitespace removed, nil);
//   - anything else (not JSON, JSON that is not an object, non-strict JSON) → (nil, the body decoded
//     as UTF-8 with U+FFFD replacement, see [RawText]).
func RequestPayload(body []byte) (obj json.RawMessage, raw *string) {
	return payloadWith(body, nil)
}

// ResponsePayload is [RequestPayload] for a non-streamed response body (SPEC §3.1 #11/#13, D6).
// Streams are the caller's business: a reassembled SSE response is the object, and the full SSE
// text always goes to response_raw ([RawText]) whenever the body is non-empty (SPEC §3.1 #13). On
// the exception path (SPEC §4.7) the caller stores only [RawText] and leaves the response null.
func ResponsePayload(body []byte) (obj json.RawMessage, raw *string) {
	return payloadWith(body, nil)
}

// sharedPayload is [RequestPayload] without the copy when body is already compact strict JSON
// object text (what SDK clients send): the object is body itself, sharing its memory. The pass that
// validates (and, when needed, compacts) the body is w's, so its caller reads the body's facts in
// the same pass.
func sharedPayload(body []byte, w *ojson.Walker) (json.RawMessage, *string) {
	// A pretty-printed body ("{\n  ...", as several providers answer) is not compact: go straight to
	// the one compacting pass instead of checking the whole body first.
	if len(body) > 1 && body[0] == '{' && !isJSONSpace(body[1]) {
		if compact, err := w.Check(body); err == nil && compact {
			return body, nil // one strict JSON object (it starts with '{') without a byte to remove
		}
		w = nil // the facts are read (or the body is no object): what follows only compacts
	}
	return payloadWith(body, w)
}

// payloadWith is [RequestPayload], compacting with w when w is set.
func payloadWith(body []byte, w *ojson.Walker) (json.RawMessage, *string) {
	if len(body) == 0 {
		return nil, nil
	}
	if first := firstNonSpace(body); first == '{' {
		var obj []byte
		var err error
		if w != nil {
			obj, err = w.Compact(make([]byte, 0, len(body)), body)
		} else {
			obj, err = ojson.CompactDepth(make([]byte, 0, len(body)), body, PayloadMaxDepth)
		}
		if err == nil {
			return obj, nil
		}
	}
	return nil, RawText(body)
}

// isJSONSpace reports whether c is JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// firstNonSpace returns the first byte after JSON whitespace, or 0.
func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if !isJSONSpace(c) {
			return c
		}
	}
	return 0
}

// RawText returns body decoded as UTF-8 with each ill-formed sequence replaced by U+FFFD the way
// Python's bytes.decode("utf-8", "replace") does (SPEC §3.1 request_raw/response_raw); nil for an
// empty body.
func RawText(body []byte) *string {
	if len(body) == 0 {
		return nil
	}
	s := ojson.DecodeUTF8(body)
	return &s
}

// SharedRawText is [RawText] without the copy: when body is valid UTF-8 (the usual case) the string
// shares body's memory, so a 1 MiB stream's response_raw costs no second MiB. body must never be
// modified afterwards (the string, the record and the span attributes built from it would change
// with it); ill-formed input is copied with its replacements as RawText does.
func SharedRawText(body []byte) *string {
	if len(body) == 0 {
		return nil
	}
	if !utf8.Valid(body) {
		return RawText(body)
	}
	s := bytesText(body)
	return &s
}

// bytesText views b as a string without copying it ("" for an empty b): b must not change while
// the string is in use.
func bytesText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
