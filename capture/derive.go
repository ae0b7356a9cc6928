package capture

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// errorf builds a derivation/validation error with the package's prefix.
func errorf(format string, args ...any) error {
	return fmt.Errorf("capture record: "+format, args...)
}

// ModelCallRecord is the record derived from one raw exchange (SPEC §3.2), field for field in the
// reference's order; see [BuildModelCallRecord] for each derivation. Pointer fields are nil when
// the value is null. Request and Response are compact JSON object text (nil = null), re-encoded
// like orjson from what Gym's reader sees (duplicate keys collapsed: first position, last value).
//
// A ModelCallRecord is a plain value, safe to share read-only between goroutines.
type ModelCallRecord struct {
	ModelCallID         *string         // 1 model_call_id
	ResponseID          *string         // 2 response_id: response.id when a string
	CallIndex           int             // 3 call_index: capture index of the line (SPEC §2.5)
	ModelRef            *ModelRef       // 4 model_ref
	Model               *string         // 5 model: response.model if truthy else request.model, when a string
	Dialect             *string         // 6 dialect
	StatusCode          *int            // 7 status_code (pydantic lax int)
	ResponseStatus      *string         // 8 response_status: response.status when a string
	FinishReason        *string         // 9 finish_reason
	StartedAt           *float64        // 10 started_at, UTC Unix seconds
	CompletedAt         *float64        // 11 completed_at, UTC Unix seconds
	TokensIn            *int64          // 12 tokens_in (SPEC §3.5)
	TokensOut           *int64          // 13 tokens_out
	TokensReasoning     *int64          // 14 tokens_reasoning
	TokensTotal         *int64          // 15 tokens_total
	Request             json.RawMessage // 16 request (payload key)
	Response            json.RawMessage // 17 response (payload key)
	RequestRaw          *string         // 18 request_raw (payload key)
	ResponseRaw         *string         // 19 response_raw (payload key)
	ToolCalls           []ToolCall      // 20 tool_calls (SPEC §3.6), never nil after BuildModelCallRecord
	ReasoningContent    *string         // 21 reasoning_content
	CacheHit            *bool           // 22 cache_hit
	CachedTokens        *int64          // 23 cached_tokens
	CacheCreationTokens *int64          // 24 cache_creation_tokens
	ErrorCategory       *string         // 25 error_category
	LatencyTotalMS      *float64        // 26 latency_total_ms: exchange.latency_ms, milliseconds
	LatencyTTFTMS       *float64        // 27 latency_ttft_ms, milliseconds
}

// RecordFieldNames lists the 27 keys of a ModelCallRecord dump in order (SPEC §3.2).
var RecordFieldNames = []string{
	"model_call_id", "response_id", "call_index", "model_ref", "model", "dialect", "status_code",
	"response_status", "finish_reason", "started_at", "completed_at", "tokens_in", "tokens_out",
	"tokens_reasoning", "tokens_total", "request", "response", "request_raw", "response_raw",
	"tool_calls", "reasoning_content", "cache_hit", "cached_tokens", "cache_creation_tokens",
	"error_category", "latency_total_ms", "latency_ttft_ms",
}

// PayloadFieldNames are the record keys left out of a dump unless payloads are included (SPEC §5.1).
var PayloadFieldNames = []string{"request", "response", "request_raw", "response_raw"}

// BuildModelCallRecord derives the record of one capture line (SPEC §3.2) at capture index
// callIndex. line must be one strict JSON object (any shape: a gymtrace or a Gym line, or anything
// else); duplicate keys are read the way Gym's reader reads them (last value wins).
//
// It returns an error exactly when the reference cannot build the record, which the tolerant reader
// counts as unreadable (SPEC §2.5): line is not strict JSON or not an object; model_call_id,
// dialect or error_category present but not a string; model_ref present but not an object whose
// type is literally "responses_api_models" and whose name is a string; status_code not an integer
// under pydantic's lax rules ("200", 200.0 and true are accepted; 200.5, "abc" and integers beyond
// int64 are not); started_at, completed_at, latency_ms or latency_ttft_ms not a number (lax: ints,
// booleans and numeric strings accepted); or a reasoning summary / chat tool_calls value that is a
// truthy number or boolean (the reference's TypeError, SPEC §9 #10).
func BuildModelCallRecord(line []byte, callIndex int) (ModelCallRecord, error) {
	v, err := ojson.Parse(line)
	if err != nil {
		return ModelCallRecord{}, errorf("line is not strict JSON: %w", err)
	}
	return buildRecord(v.CollapseDuplicates(), callIndex)
}

// buildSharedRecord is [BuildModelCallRecord] for a line of a buffer the caller never modifies
// (a capture file read whole). It builds no parse tree ([ojson.ParseLazy]): the line is validated
// by the jsontext pass and each field's value is read from the line's text where the record needs
// it, so reading a line allocates only the record, its decoded escaped strings (at most the
// line's length) and the tool calls' texts, never a tree of payload parts it only copies or skips
// (README "Reading a large capture line holds it at most twice", #14 finding 2: a tree node per
// value cost 36 times a response of many `0,`). When a payload is exactly what the record encoder
// writes for it (compact, orjson's escapes, no duplicate keys: what gymtrace and Gym write for
// an answer in that form), request and response are sub-slices of line; else they are encoded
// from the line's text as BuildModelCallRecord encodes them (the same bytes).
func buildSharedRecord(line []byte, callIndex int) (ModelCallRecord, error) {
	v, err := ojson.ParseLazy(line)
	if err != nil {
		return ModelCallRecord{}, errorf("line is not strict JSON: %w", err)
	}
	return buildRecord(v, callIndex)
}

// payloadText returns the JSON text of ex's member key when it is an object ([encodedText]); nil
// when the member is missing or not an object.
func payloadText(ex ojson.Value, key string) json.RawMessage {
	v, _ := ex.Get(key)
	if v.Kind() != ojson.KindObject {
		return nil
	}
	return encodedText(v)
}

// ModelCallRecord derives e's record (SPEC §3.2) as a reader of e's capture line would, with
// capture index callIndex. It fails only when e holds values Gym could not read back (see
// [Exchange.Validate] and [BuildModelCallRecord]).
func (e *Exchange) ModelCallRecord(callIndex int) (ModelCallRecord, error) {
	return BuildModelCallRecord(e.AppendJSON(nil), callIndex)
}

// responseKeys are the members of a response the record reads (SPEC §3.2, §3.5, §3.6).
var responseKeys = []string{"usage", "output", "choices", "content", "stop_reason", "model", "id", "status", "incomplete_details"}

func buildRecord(ex ojson.Value, callIndex int) (ModelCallRecord, error) {
	if ex.Kind() != ojson.KindObject {
		return ModelCallRecord{}, errorf("line is a JSON %s, not an object", ex.Kind())
	}
	ex = ojson.Object(ex.Members()...) // the line's outer level, read once
	response := get(ex, "response").Pick(responseKeys...)
	request := get(ex, "request")

	r := ModelCallRecord{CallIndex: callIndex}
	usage := get(response, "usage")
	ts := extractTokenStats(usage)
	r.TokensIn, r.TokensOut, r.TokensReasoning, r.TokensTotal = ts.TokensIn, ts.TokensOut, ts.TokensReasoning, ts.TokensTotal
	r.CacheHit, r.CachedTokens, r.CacheCreationTokens = ts.CacheHit, ts.CachedTokens, ts.CacheCreationTokens

	var err error
	if r.ToolCalls, r.ReasoningContent, err = toolCallsAndReasoning(response); err != nil {
		return ModelCallRecord{}, err
	}
	r.FinishReason = finishReason(response)
	if s, ok := or(get(response, "model"), get(request, "model")).AsString(); ok {
		r.Model = &s
	}
	r.ResponseID = strPtr(get(response, "id"))
	r.ResponseStatus = strPtr(get(response, "status"))
	r.Request = payloadText(ex, "request")
	r.Response = payloadText(ex, "response")
	r.RequestRaw = strPtr(get(ex, "request_raw"))
	r.ResponseRaw = strPtr(get(ex, "response_raw"))

	// Pydantic validation of the exchange-sourced fields.
	if r.ModelCallID, err = optString(ex, "model_call_id"); err != nil {
		return ModelCallRecord{}, err
	}
	if r.Dialect, err = optString(ex, "dialect"); err != nil {
		return ModelCallRecord{}, err
	}
	if r.ErrorCategory, err = optString(ex, "error_category"); err != nil {
		return ModelCallRecord{}, err
	}
	if r.ModelRef, err = modelRef(get(ex, "model_ref")); err != nil {
		return ModelCallRecord{}, err
	}
	if r.StatusCode, err = laxInt(get(ex, "status_code")); err != nil {
		return ModelCallRecord{}, errorf("status_code: %w", err)
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{
		{"started_at", &r.StartedAt}, {"completed_at", &r.CompletedAt},
		{"latency_ms", &r.LatencyTotalMS}, {"latency_ttft_ms", &r.LatencyTTFTMS},
	} {
		if *f.dst, err = laxFloat(get(ex, f.key)); err != nil {
			return ModelCallRecord{}, errorf("%s: %w", f.key, err)
		}
	}
	return r, nil
}

// finishReason is the first string (empty counts) among response.stop_reason,
// response.choices[0].finish_reason (choices a non-empty list whose first element is an object)
// and response.incomplete_details.reason (incomplete_details an object) (SPEC §3.2 #9).
func finishReason(response ojson.Value) *string {
	candidates := []ojson.Value{get(response, "stop_reason")}
	for first := range get(response, "choices").Elements() {
		if first.Kind() == ojson.KindObject {
			candidates = append(candidates, get(first, "finish_reason"))
		}
		break
	}
	if details := get(response, "incomplete_details"); details.Kind() == ojson.KindObject {
		candidates = append(candidates, get(details, "reason"))
	}
	for _, c := range candidates {
		if s := strPtr(c); s != nil {
			return s
		}
	}
	return nil
}

func strPtr(v ojson.Value) *string {
	s, ok := v.AsString()
	if !ok {
		return nil
	}
	return &s
}

// optString validates an Optional[str] field: null/missing → nil, a string → it, else an error.
func optString(ex ojson.Value, key string) (*string, error) {
	v := get(ex, key)
	if v.IsNull() {
		return nil, nil
	}
	s, ok := v.AsString()
	if !ok {
		return nil, errorf("%s: a JSON %s, not a string", key, v.Kind())
	}
	return &s, nil
}

// modelRef validates Optional[ModelServerRef]: null → nil; an object with type exactly
// "responses_api_models" and a string name (other keys ignored) → the ref; else an error.
func modelRef(v ojson.Value) (*ModelRef, error) {
	if v.IsNull() {
		return nil, nil
	}
	if v.Kind() != ojson.KindObject {
		return nil, errorf("model_ref: a JSON %s, not an object", v.Kind())
	}
	typ, ok := get(v, "type").AsString()
	if !ok || typ != ModelRefType {
		return nil, errorf("model_ref.type: %s is not %q", get(v, "type"), ModelRefType)
	}
	name, ok := get(v, "name").AsString()
	if !ok {
		return nil, errorf("model_ref.name: %s is not a string", get(v, "name"))
	}
	return &ModelRef{Type: typ, Name: name}, nil
}

// laxInt is pydantic's lax int for Optional[int] fields: null → nil; a JSON integer; a finite
// float with no fractional part ("200.0", "2e2"); a boolean (1/0); a string holding an integer
// (surrounding whitespace, a sign, "_" between digits and a ".000" suffix allowed). Values beyond
// int64 are errors here (Go's int is the record's type).
func laxInt(v ojson.Value) (*int, error) {
	var n int64
	switch v.Kind() {
	case ojson.KindNull:
		return nil, nil
	case ojson.KindBool:
		if b, _ := v.AsBool(); b {
			n = 1
		}
	case ojson.KindNumber:
		text, _ := v.NumberText()
		if v.IsInteger() {
			i, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("integer %s outside the int64 range", text)
			}
			n = i
			break
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%s is not a finite number", text)
		}
		if f != math.Trunc(f) {
			return nil, fmt.Errorf("%s has a fractional part", text)
		}
		if f <= math.MinInt64 || f >= math.MaxInt64 {
			return nil, fmt.Errorf("%s outside the int64 range", text)
		}
		n = int64(f)
	case ojson.KindString:
		s, _ := v.AsString()
		i, err := laxIntString(s)
		if err != nil {
			return nil, err
		}
		n = i
	default:
		return nil, fmt.Errorf("a JSON %s, not an integer", v.Kind())
	}
	if int64(int(n)) != n {
		return nil, fmt.Errorf("%d does not fit in int", n)
	}
	i := int(n)
	return &i, nil
}

func laxIntString(raw string) (int64, error) {
	s := strings.TrimSpace(raw)
	if len(s) > 4300 {
		return 0, fmt.Errorf("string of %d bytes is too long for an integer", len(s))
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if dot := strings.IndexByte(s, '.'); dot >= 0 && strings.Trim(s[dot+1:], "0") == "" {
		if i, err := strconv.ParseInt(s[:dot], 10, 64); err == nil {
			return i, nil
		}
		return 0, fmt.Errorf("%q is not an integer", raw)
	}
	if strings.Contains(s, "_") && !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && !strings.Contains(s, "__") {
		if i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not an integer", raw)
}

// laxFloat is pydantic's lax float for Optional[float] fields: null → nil; any JSON number
// (integers become floats: 100 → 100.0); a boolean (1.0/0.0); a string holding a decimal number,
// "inf" or "nan" (surrounding whitespace allowed). Anything else is an error.
func laxFloat(v ojson.Value) (*float64, error) {
	var f float64
	switch v.Kind() {
	case ojson.KindNull:
		return nil, nil
	case ojson.KindBool:
		if b, _ := v.AsBool(); b {
			f = 1
		}
	case ojson.KindNumber:
		text, _ := v.NumberText()
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is out of the float64 range", text)
		}
		f = x
	case ojson.KindString:
		s, _ := v.AsString()
		t := strings.TrimSpace(s)
		if strings.ContainsAny(t, "xXpP") {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		x, err := strconv.ParseFloat(t, 64)
		if err != nil {
			if u := strings.ReplaceAll(t, "_", ""); u != t && !strings.HasPrefix(t, "_") && !strings.HasSuffix(t, "_") && !strings.Contains(t, "__") {
				x, err = strconv.ParseFloat(u, 64)
			}
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", s)
			}
		}
		f = x
	default:
		return nil, fmt.Errorf("a JSON %s, not a number", v.Kind())
	}
	return &f, nil
}

// AppendJSON appends r's dump (SPEC §3.2, §5.1) to dst as one compact JSON object, no newline:
// all 27 keys in field order with nulls included, except the payload keys request, response,
// request_raw and response_raw, which are written only when includePayloads is true. Strings and
// floats are written like orjson (see [Exchange.AppendJSON]); a nil ToolCalls is written as [].
func (r *ModelCallRecord) AppendJSON(dst []byte, includePayloads bool) []byte {
	dst = append(dst, `{"model_call_id":`...)
	dst = appendStrPtr(dst, r.ModelCallID)
	dst = append(dst, `,"response_id":`...)
	dst = appendStrPtr(dst, r.ResponseID)
	dst = append(dst, `,"call_index":`...)
	dst = strconv.AppendInt(dst, int64(r.CallIndex), 10)
	dst = append(dst, `,"model_ref":`...)
	if r.ModelRef != nil {
		dst = r.ModelRef.appendJSON(dst)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"model":`...)
	dst = appendStrPtr(dst, r.Model)
	dst = append(dst, `,"dialect":`...)
	dst = appendStrPtr(dst, r.Dialect)
	dst = append(dst, `,"status_code":`...)
	if r.StatusCode != nil {
		dst = strconv.AppendInt(dst, int64(*r.StatusCode), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"response_status":`...)
	dst = appendStrPtr(dst, r.ResponseStatus)
	dst = append(dst, `,"finish_reason":`...)
	dst = appendStrPtr(dst, r.FinishReason)
	dst = append(dst, `,"started_at":`...)
	dst = appendFloatPtr(dst, r.StartedAt)
	dst = append(dst, `,"completed_at":`...)
	dst = appendFloatPtr(dst, r.CompletedAt)
	dst = append(dst, `,"tokens_in":`...)
	dst = appendIntPtr(dst, r.TokensIn)
	dst = append(dst, `,"tokens_out":`...)
	dst = appendIntPtr(dst, r.TokensOut)
	dst = append(dst, `,"tokens_reasoning":`...)
	dst = appendIntPtr(dst, r.TokensReasoning)
	dst = append(dst, `,"tokens_total":`...)
	dst = appendIntPtr(dst, r.TokensTotal)
	if includePayloads {
		dst = append(dst, `,"request":`...)
		dst = appendRaw(dst, r.Request)
		dst = append(dst, `,"response":`...)
		dst = appendRaw(dst, r.Response)
		dst = append(dst, `,"request_raw":`...)
		dst = appendStrPtr(dst, r.RequestRaw)
		dst = append(dst, `,"response_raw":`...)
		dst = appendStrPtr(dst, r.ResponseRaw)
	}
	dst = append(dst, `,"tool_calls":[`...)
	for i := range r.ToolCalls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.ToolCalls[i].appendJSON(dst)
	}
	dst = append(dst, `],"reasoning_content":`...)
	dst = appendStrPtr(dst, r.ReasoningContent)
	dst = append(dst, `,"cache_hit":`...)
	switch {
	case r.CacheHit == nil:
		dst = append(dst, "null"...)
	case *r.CacheHit:
		dst = append(dst, "true"...)
	default:
		dst = append(dst, "false"...)
	}
	dst = append(dst, `,"cached_tokens":`...)
	dst = appendIntPtr(dst, r.CachedTokens)
	dst = append(dst, `,"cache_creation_tokens":`...)
	dst = appendIntPtr(dst, r.CacheCreationTokens)
	dst = append(dst, `,"error_category":`...)
	dst = appendStrPtr(dst, r.ErrorCategory)
	dst = append(dst, `,"latency_total_ms":`...)
	dst = appendFloatPtr(dst, r.LatencyTotalMS)
	dst = append(dst, `,"latency_ttft_ms":`...)
	dst = appendFloatPtr(dst, r.LatencyTTFTMS)
	return append(dst, '}')
}

func appendStrPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return ojson.AppendString(dst, *s)
}

func appendIntPtr(dst []byte, n *int64) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *n, 10)
}
