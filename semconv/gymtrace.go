package semconv

import "go.opentelemetry.io/otel/attribute"

// Project keys (gymtrace.*). These are not OpenTelemetry semantic conventions; they carry what the
// capture record needs so that a record can be rebuilt from a span alone (SPEC.md §0 "Spans").
const (
	// GymtraceRolloutIDKey is the rollout id (SPEC §1) the call belongs to.
	GymtraceRolloutIDKey = attribute.Key("gymtrace.rollout.id")
	// GymtraceModelCallIDKey is the record's model_call_id: 32 lowercase hex chars (SPEC §3.1).
	GymtraceModelCallIDKey = attribute.Key("gymtrace.model_call.id")
	// GymtraceCaptureRecordedKey is true on a model-call span whose capture record the process that
	// emitted it writes itself (a gymtrace proxy with its own capture directory): by the time the
	// span is exported the record is durable or the rollout marked incomplete, so a capture
	// Collector fed the same spans skips it (gymcapture's skip_recorded, issue #16 part 1). Absent
	// on spans whose record is written elsewhere (`--capture-via-otlp`).
	GymtraceCaptureRecordedKey = attribute.Key("gymtrace.capture.recorded")
	// GymtraceDialectKey is the dialect: see the Dialect* values.
	GymtraceDialectKey = attribute.Key("gymtrace.dialect")
	// GymtraceModelRefTypeKey is model_ref.type (always "responses_api_models"); absent when model_ref is null.
	GymtraceModelRefTypeKey = attribute.Key("gymtrace.model_ref.type")
	// GymtraceModelRefNameKey is model_ref.name, the model server name.
	GymtraceModelRefNameKey = attribute.Key("gymtrace.model_ref.name")
	// GymtraceLatencyMSKey is latency_ms: start to end of the upstream body, in ms, rounded to 2 decimals.
	GymtraceLatencyMSKey = attribute.Key("gymtrace.latency_ms")
	// GymtraceLatencyTTFTMSKey is latency_ttft_ms: start to the first non-empty body chunk, in ms,
	// rounded to 2 decimals; absent when no body bytes arrived.
	GymtraceLatencyTTFTMSKey = attribute.Key("gymtrace.latency_ttft_ms")
	// GymtraceErrorCategoryKey is the record's error_category (SPEC §3.3); absent when null.
	GymtraceErrorCategoryKey = attribute.Key("gymtrace.error_category")
	// GymtraceCaptureBoundKindKey is capture_bound.kind (SPEC §0 D15): which capture bound the call
	// passed, one of the CaptureBoundKind* values; absent when the record holds the whole response.
	GymtraceCaptureBoundKindKey = attribute.Key("gymtrace.capture_bound.kind")
	// GymtraceCaptureBoundLimitKey is capture_bound.limit: the bound's configured value (bytes, or
	// the decoded/encoded ratio for "decode_ratio").
	GymtraceCaptureBoundLimitKey = attribute.Key("gymtrace.capture_bound.limit")
	// GymtraceCaptureBoundSeenKey is capture_bound.seen: response bytes received when the call ended.
	GymtraceCaptureBoundSeenKey = attribute.Key("gymtrace.capture_bound.seen")

	// GymtraceRequestBodyKey is the request object's JSON text (SPEC D6); absent when request is null.
	GymtraceRequestBodyKey = attribute.Key("gymtrace.request.body")
	// GymtraceRequestBodySizeKey is the length of gymtrace.request.body in bytes; a shorter attribute
	// value means it was cut by a limit and must not be written as whole.
	GymtraceRequestBodySizeKey = attribute.Key("gymtrace.request.body.size")
	// GymtraceRequestRawKey is request_raw: the request text when it is not a JSON object.
	GymtraceRequestRawKey = attribute.Key("gymtrace.request.raw")
	// GymtraceRequestRawSizeKey is the length of gymtrace.request.raw in bytes.
	GymtraceRequestRawSizeKey = attribute.Key("gymtrace.request.raw.size")
	// GymtraceResponseBodyKey is the response object's JSON text (parsed or reassembled); absent when null.
	GymtraceResponseBodyKey = attribute.Key("gymtrace.response.body")
	// GymtraceResponseBodySizeKey is the length of gymtrace.response.body in bytes.
	GymtraceResponseBodySizeKey = attribute.Key("gymtrace.response.body.size")
	// GymtraceResponseRawKey is response_raw: the decoded response text (SSE text for streams).
	GymtraceResponseRawKey = attribute.Key("gymtrace.response.raw")
	// GymtraceResponseRawSizeKey is the length of gymtrace.response.raw in bytes.
	GymtraceResponseRawSizeKey = attribute.Key("gymtrace.response.raw.size")
)

// The capture_bound.kind values (SPEC §0 D15).
const (
	CaptureBoundKindResponseBytes  = "response_bytes"   // --max-response-bytes, counted as received
	CaptureBoundKindDecodedBytes   = "decoded_bytes"    // --max-decoded-bytes
	CaptureBoundKindDecodeRatio    = "decode_ratio"     // --max-decode-ratio
	CaptureBoundKindInFlightBudget = "in_flight_budget" // --max-capture-bytes-in-flight
)

// GymtraceRolloutIDBaggageMember is the W3C baggage member that may carry a call's rollout id when
// the URL has no /ng-rollout/ prefix: a baggage key, not a span attribute or semantic convention.
const GymtraceRolloutIDBaggageMember = "gymtrace.rollout_id"

// PayloadKeys lists the payload attributes (not their size attributes), for stripping before OTLP
// export. Callers must not modify it.
var PayloadKeys = []attribute.Key{
	GymtraceRequestBodyKey, GymtraceRequestRawKey, GymtraceResponseBodyKey, GymtraceResponseRawKey,
}

// PayloadSizeKey returns the size attribute of a payload attribute (gymtrace.request.body →
// gymtrace.request.body.size, and so on for the keys of [PayloadKeys]), and false for any other key.
func PayloadSizeKey(payload attribute.Key) (attribute.Key, bool) {
	switch payload {
	case GymtraceRequestBodyKey:
		return GymtraceRequestBodySizeKey, true
	case GymtraceRequestRawKey:
		return GymtraceRequestRawSizeKey, true
	case GymtraceResponseBodyKey:
		return GymtraceResponseBodySizeKey, true
	case GymtraceResponseRawKey:
		return GymtraceResponseRawSizeKey, true
	}
	return "", false
}

// GymtraceRolloutID returns the gymtrace.rollout.id attribute.
func GymtraceRolloutID(v string) attribute.KeyValue { return GymtraceRolloutIDKey.String(v) }

// GymtraceModelCallID returns the gymtrace.model_call.id attribute.
func GymtraceModelCallID(v string) attribute.KeyValue { return GymtraceModelCallIDKey.String(v) }

// GymtraceDialect returns the gymtrace.dialect attribute.
func GymtraceDialect(v string) attribute.KeyValue { return GymtraceDialectKey.String(v) }

// GymtraceModelRefType returns the gymtrace.model_ref.type attribute.
func GymtraceModelRefType(v string) attribute.KeyValue { return GymtraceModelRefTypeKey.String(v) }

// GymtraceModelRefName returns the gymtrace.model_ref.name attribute.
func GymtraceModelRefName(v string) attribute.KeyValue { return GymtraceModelRefNameKey.String(v) }

// GymtraceLatencyMS returns the gymtrace.latency_ms attribute (milliseconds).
func GymtraceLatencyMS(ms float64) attribute.KeyValue { return GymtraceLatencyMSKey.Float64(ms) }

// GymtraceLatencyTTFTMS returns the gymtrace.latency_ttft_ms attribute (milliseconds).
func GymtraceLatencyTTFTMS(ms float64) attribute.KeyValue {
	return GymtraceLatencyTTFTMSKey.Float64(ms)
}

// GymtraceErrorCategory returns the gymtrace.error_category attribute.
func GymtraceErrorCategory(v string) attribute.KeyValue { return GymtraceErrorCategoryKey.String(v) }

// Dialect values (gymtrace.dialect, the record's "dialect", SPEC §1.6).
const (
	DialectResponses = "responses"
	DialectChat      = "chat"
	DialectMessages  = "messages"
)

// ModelRefTypeResponsesAPIModels is the only model_ref.type value (SPEC §3.1).
const ModelRefTypeResponsesAPIModels = "responses_api_models"

// Error categories (SPEC §3.3 plus gymtrace's "cancelled", D3).
const (
	ErrorCategoryTimeout           = "timeout"
	ErrorCategoryRateLimit         = "rate_limit"
	ErrorCategoryAuth              = "auth"
	ErrorCategoryNotFound          = "not_found"
	ErrorCategoryClientError       = "client_error"
	ErrorCategoryUpstreamError     = "upstream_error"
	ErrorCategoryIncomplete        = "incomplete"
	ErrorCategoryStreamTruncated   = "stream_truncated"
	ErrorCategoryCaptureParseError = "capture_parse_error"
	ErrorCategoryConnection        = "connection"
	ErrorCategoryException         = "exception"
	ErrorCategoryCancelled         = "cancelled"
)

// Capture gap codes of ng_model_call_capture (SPEC §5.3).
const (
	GapCaptureNoRecords          = "model_call_capture_no_records"
	GapCaptureRecordsUnreadable  = "model_call_capture_records_unreadable"
	GapCaptureIncomplete         = "model_call_capture_incomplete"
	GapCaptureUnreadable         = "model_call_capture_unreadable"
	GapMultimodalHistoryRedacted = "multimodal_history_redacted"
)

// ProviderForDialect returns the gen_ai.provider.name value for a dialect ("" when unknown).
func ProviderForDialect(dialect string) string {
	switch dialect {
	case DialectResponses, DialectChat:
		return GenAIProviderNameOpenAI
	case DialectMessages:
		return GenAIProviderNameAnthropic
	}
	return ""
}
