package proxy

import (
	"bytes"
	"encoding/json"
)

// ErrorBody returns a JSON error body, in the shape of the dialect of strippedPath, for a response
// the capture proxy makes itself (SPEC D12 invalid ids, D5 unreachable or timed-out upstreams).
// For "/v1/messages" the shape is Anthropic's: {"type":"error","error":{"type":errorType,"message":message}}
// (code is not part of it). For every other path it is OpenAI's:
// {"error":{"message":message,"type":errorType,"param":null,"code":code}}; an empty code is written
// as null. Keys are in that order; strings are JSON-escaped without HTML escaping; no trailing
// newline.
func ErrorBody(strippedPath, errorType, message, code string) []byte {
	type anthropicError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	type anthropicBody struct {
		Type  string         `json:"type"`
		Error anthropicError `json:"error"`
	}
	type openAIError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	type openAIBody struct {
		Error openAIError `json:"error"`
	}
	var v any
	if CapturedDialect(strippedPath) == "messages" {
		v = anthropicBody{Type: "error", Error: anthropicError{Type: errorType, Message: message}}
	} else {
		e := openAIError{Message: message, Type: errorType}
		if code != "" {
			e.Code = &code
		}
		v = openAIBody{Error: e}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encoding plain strings and structs cannot fail.
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
