package capture

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// ModelRefType is the only model_ref.type value (SPEC §3.1, §3.2).
const ModelRefType = "responses_api_models"

// ModelRef names the model server that served a call (SPEC §3.1 model_ref): Type is always
// [ModelRefType], Name is the model server's name.
type ModelRef struct {
	Type string
	Name string
}

// appendJSON writes {"type":...,"name":...}.
func (m *ModelRef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = ojson.AppendString(dst, m.Type)
	dst = append(dst, `,"name":`...)
	dst = ojson.AppendString(dst, m.Name)
	return append(dst, '}')
}

// Exchange is the raw record of one captured HTTP exchange: one line of a capture file
// (SPEC §3.1). The zero value is not a useful record; the capture middleware fills every field.
type Exchange struct {
	// ModelCallID is the call's id: 32 lowercase hex characters (uuid4().hex in the reference).
	ModelCallID string
	// Dialect is "responses", "chat" or "messages" (SPEC §1.6).
	Dialect string
	// ModelRef is the model server, nil (written as null) when the server has no name.
	ModelRef *ModelRef
	// StartedAt and CompletedAt are wall-clock UTC Unix times in seconds (full float64 precision,
	// never rounded): the start of the call and the end of the upstream body.
	StartedAt, CompletedAt float64
	// LatencyMS is the monotonic duration of the call in milliseconds, already rounded with
	// [RoundMS].
	LatencyMS float64
	// LatencyTTFTMS is the time to the first non-empty response body chunk in milliseconds, rounded
	// with [RoundMS]; nil (null) when no body bytes arrived.
	LatencyTTFTMS *float64
	// StatusCode is the HTTP status received; nil (null) when there was none.
	StatusCode *int
	// ErrorCategory is the SPEC §3.3 category (see [Category]); "" is written as null.
	ErrorCategory string
	// Request and Response are compact JSON object text (from [RequestPayload], [ResponsePayload] or
	// a reassembled stream), written verbatim; nil is written as null. They must be valid JSON
	// objects: AppendJSON does not check them ([Exchange.Validate] does).
	Request, Response json.RawMessage
	// RequestRaw and ResponseRaw hold the body text when it is not stored as an object (SPEC §3.1
	// #12/#13); nil omits the key.
	RequestRaw, ResponseRaw *string
	// TraceID and SpanID are the model-call span's ids (32 and 16 lowercase hex characters),
	// appended after every other key when non-empty (SPEC §0 "Record keys").
	TraceID, SpanID string
	// CaptureBound says which capture bound cut the response short (SPEC §0 D15), nil when the
	// record holds the whole response; written after trace_id/span_id as "capture_bound".
	CaptureBound *CaptureBound
}

// CaptureBound is a record's capture_bound (SPEC §0 D15): the capture stopped collecting the
// response at a bound while forwarding went on.
type CaptureBound struct {
	// Kind is semconv.CaptureBoundKindResponseBytes, ...DecodedBytes, ...DecodeRatio or
	// ...InFlightBudget.
	Kind string
	// Limit is the bound's configured value: bytes, or the decoded/encoded ratio for decode_ratio.
	Limit int64
	// Seen is the response bytes received (before decoding) when the call ended.
	Seen int64
}

// appendJSON writes {"kind":...,"limit":...,"seen":...}.
func (b *CaptureBound) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = ojson.AppendString(dst, b.Kind)
	dst = append(dst, `,"limit":`...)
	dst = strconv.AppendInt(dst, b.Limit, 10)
	dst = append(dst, `,"seen":`...)
	dst = strconv.AppendInt(dst, b.Seen, 10)
	return append(dst, '}')
}

// AppendJSON appends e as one capture line, including the trailing "\n", to dst: keys in SPEC §3.1
// order, then request_raw/response_raw when non-nil, then trace_id/span_id when non-empty, then
// capture_bound when non-nil (SPEC §0 D15); strings
// written like orjson (nothing HTML-escaped, non-ASCII raw), floats via [ojson.AppendFloat]
// (orjson's float text, SPEC §0 D6: always with a decimal point or exponent), Request/Response
// verbatim. A NaN or infinite float is written as null, as orjson does.
func (e *Exchange) AppendJSON(dst []byte) []byte {
	return e.appendJSON(dst, nil, nil)
}

// appendJSON is AppendJSON; with p set, the request, response, request_raw and response_raw come
// from the span's payload attributes instead of e's fields (see [AppendLineFromAttributes]); with
// sink set, the payloads go out in pieces through it and the unsent rest of the line is returned
// (see [SpanLine.WriteTo]).
func (e *Exchange) appendJSON(dst []byte, p *spanPayloads, sink *lineSink) []byte {
	dst = append(dst, `{"model_call_id":`...)
	dst = ojson.AppendString(dst, e.ModelCallID)
	dst = append(dst, `,"dialect":`...)
	dst = ojson.AppendString(dst, e.Dialect)
	dst = append(dst, `,"model_ref":`...)
	if e.ModelRef != nil {
		dst = e.ModelRef.appendJSON(dst)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"started_at":`...)
	dst = ojson.AppendFloat(dst, e.StartedAt)
	dst = append(dst, `,"completed_at":`...)
	dst = ojson.AppendFloat(dst, e.CompletedAt)
	dst = append(dst, `,"latency_ms":`...)
	dst = ojson.AppendFloat(dst, e.LatencyMS)
	dst = append(dst, `,"latency_ttft_ms":`...)
	dst = appendFloatPtr(dst, e.LatencyTTFTMS)
	dst = append(dst, `,"status_code":`...)
	if e.StatusCode != nil {
		dst = strconv.AppendInt(dst, int64(*e.StatusCode), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"error_category":`...)
	if e.ErrorCategory != "" {
		dst = ojson.AppendString(dst, e.ErrorCategory)
	} else {
		dst = append(dst, "null"...)
	}
	rawReq, rawResp := e.RequestRaw, e.ResponseRaw
	dst = append(dst, `,"request":`...)
	if p != nil {
		dst = p[reqBody].appendRecordObject(dst, sink)
		rawReq = p[reqRaw].textPtr()
	} else {
		dst = appendRaw(dst, e.Request)
	}
	dst = append(dst, `,"response":`...)
	if p != nil {
		dst = p[respBody].appendRecordObject(dst, sink)
		rawResp = p[respRaw].textPtr()
	} else {
		dst = appendRaw(dst, e.Response)
	}
	if rawReq != nil {
		dst = append(dst, `,"request_raw":`...)
		dst = sink.appendString(dst, *rawReq)
	}
	if rawResp != nil {
		dst = append(dst, `,"response_raw":`...)
		dst = sink.appendString(dst, *rawResp)
	}
	if e.TraceID != "" {
		dst = append(dst, `,"trace_id":`...)
		dst = ojson.AppendString(dst, e.TraceID)
	}
	if e.SpanID != "" {
		dst = append(dst, `,"span_id":`...)
		dst = ojson.AppendString(dst, e.SpanID)
	}
	if e.CaptureBound != nil {
		dst = append(dst, `,"capture_bound":`...)
		dst = e.CaptureBound.appendJSON(dst)
	}
	return append(dst, "}\n"...)
}

// Validate reports the first field of e that would make a line Gym cannot read or that breaks
// SPEC §3.1: Request/Response that are not a strict JSON object (SPEC §0 D6), a ModelRef whose Type
// is not [ModelRefType], an empty ModelCallID or Dialect, or TraceID/SpanID that are not 32/16
// lowercase hex characters. It does not check values Gym accepts anyway (e.g. an unknown dialect).
func (e *Exchange) Validate() error {
	if e.ModelCallID == "" {
		return errorf("model_call_id: empty")
	}
	if e.Dialect == "" {
		return errorf("dialect: empty")
	}
	if e.ModelRef != nil && e.ModelRef.Type != ModelRefType {
		return errorf("model_ref.type: %q is not %q", e.ModelRef.Type, ModelRefType)
	}
	for _, p := range []struct {
		key string
		obj json.RawMessage
	}{{"request", e.Request}, {"response", e.Response}} {
		if p.obj == nil {
			continue
		}
		v, err := ojson.Parse(p.obj)
		if err != nil {
			return errorf("%s: not strict JSON: %w", p.key, err)
		}
		if v.Kind() != ojson.KindObject {
			return errorf("%s: a JSON %s, not an object", p.key, v.Kind())
		}
	}
	if e.TraceID != "" && !isLowerHex(e.TraceID, 32) {
		return errorf("trace_id: %q is not 32 lowercase hex characters", e.TraceID)
	}
	if e.SpanID != "" && !isLowerHex(e.SpanID, 16) {
		return errorf("span_id: %q is not 16 lowercase hex characters", e.SpanID)
	}
	return nil
}

func isLowerHex(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789abcdef") == ""
}

func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

func appendFloatPtr(dst []byte, f *float64) []byte {
	if f == nil {
		return append(dst, "null"...)
	}
	return ojson.AppendFloat(dst, *f)
}
