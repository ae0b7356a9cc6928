package capture

import "github.com/gymtrace/gymtrace/internal/ojson"

// summaryMinBytes is the response size from which [responseForAttributes] reads a summary instead of
// parsing the whole response: below it, one parse costs less than checking, scanning and parsing
// the summary.
const summaryMinBytes = 4 << 10

// responseForAttributes parses a response payload for the span attributes: whole when the message
// content attributes need it or the response is small, else as [responseSummary] (the same
// attributes, see responsesummary_test.go). ok is false when resp is not strict JSON, as
// ojson.Parse would fail on it.
func responseForAttributes(resp []byte, whole bool) (v ojson.Value, ok bool) {
	if whole || len(resp) < summaryMinBytes {
		v, err := ojson.Parse(resp)
		return v, err == nil
	}
	return validResponseSummary(resp)
}

// validResponseSummary is [responseSummary] after checking that resp is strict JSON (ok false if
// not).
func validResponseSummary(resp []byte) (ojson.Value, bool) {
	if !ojson.Valid(resp) {
		return ojson.Value{}, false
	}
	return responseSummary(resp)
}

// responseSummary returns the parts of a response object that the response span attributes read
// (appendResponseAttributes, responseCompacted), as an object that gives the same answers to those
// readers as the whole parsed response, without parsing the rest (the answer text, which is most
// of a large response, is only skipped over):
//
//   - id, model, stop_reason, usage and incomplete_details, whole;
//   - choices: each choice object reduced to its finish_reason members; output and content: each
//     item reduced to its type members; a non-object element becomes null and a value that is not
//     an array becomes null (the readers only look into arrays of objects).
//
// Members keep their order and duplicates, so Get still finds the last one. The summary is written
// as JSON text from the raw member texts and parsed once. resp must be valid JSON object text
// (ojson.Valid); ok is false when it is not an object.
func responseSummary(resp []byte) (v ojson.Value, ok bool) {
	if first := firstNonSpace(resp); first != '{' {
		return ojson.Value{}, false
	}
	text := make([]byte, 0, 256)
	text = append(text, '{')
	scanTopLevel(resp, func(key, val []byte) {
		name, ok := keyName(key)
		if !ok {
			return
		}
		var keep string
		switch string(name) {
		case "id", "model", "stop_reason", "usage", "incomplete_details":
		case "choices":
			keep = "finish_reason"
		case "output", "content":
			keep = "type"
		default:
			return
		}
		if len(text) > 1 {
			text = append(text, ',')
		}
		text = append(text, key...)
		text = append(text, ':')
		if keep == "" {
			text = append(text, val...)
		} else {
			text = appendReducedItems(text, val, keep)
		}
	})
	text = append(text, '}')
	v, err := ojson.Parse(text)
	return v, err == nil
}

// appendReducedItems appends the array raw with each object element reduced to its members named
// key, other elements as null; null when raw is not an array.
func appendReducedItems(dst, raw []byte, key string) []byte {
	if len(raw) == 0 || raw[0] != '[' {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	n := 0
	scanArray(raw, func(elem []byte) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if elem[0] != '{' {
			dst = append(dst, "null"...)
			return
		}
		dst = append(dst, '{')
		m := 0
		scanTopLevel(elem, func(k, val []byte) {
			if name, ok := keyName(k); ok && string(name) == key {
				if m > 0 {
					dst = append(dst, ',')
				}
				m++
				dst = append(dst, k...)
				dst = append(dst, ':')
				dst = append(dst, val...)
			}
		})
		dst = append(dst, '}')
	})
	return append(dst, ']')
}

// scanArray calls fn with the raw text of each element of arr, which must be valid JSON array text.
func scanArray(arr []byte, fn func(elem []byte)) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return
	}
	for i < len(arr) {
		end := skipValue(arr, i)
		fn(arr[i:end])
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = skipSpace(arr, i+1)
	}
}
