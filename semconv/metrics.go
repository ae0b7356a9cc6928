package semconv

import "go.opentelemetry.io/otel/attribute"

// GenAI client metrics (semconv/v1.41.0, docs/gen-ai/gen-ai-metrics.md), each histogram created with
// its bucket boundaries below as the ExplicitBucketBoundaries advisory the conventions ask for.
const (
	// GenAIClientTokenUsageName is the histogram of input and output tokens per call (unit
	// [GenAIClientTokenUsageUnit]), one measurement per token type, distinguished by
	// [GenAITokenTypeKey]. Recorded only for counts the response reported.
	GenAIClientTokenUsageName = "gen_ai.client.token.usage"
	// GenAIClientTokenUsageUnit is the unit of gen_ai.client.token.usage.
	GenAIClientTokenUsageUnit = "{token}"
	// GenAIClientTokenUsageDescription is the description of gen_ai.client.token.usage.
	GenAIClientTokenUsageDescription = "Number of input and output tokens used."

	// GenAIClientOperationDurationName is the histogram of call durations in seconds, from the
	// start of the call to the end of the response body.
	GenAIClientOperationDurationName = "gen_ai.client.operation.duration"
	// GenAIClientOperationDurationUnit is the unit of gen_ai.client.operation.duration (seconds).
	GenAIClientOperationDurationUnit = "s"
	// GenAIClientOperationDurationDescription is the description of gen_ai.client.operation.duration.
	GenAIClientOperationDurationDescription = "GenAI operation duration."

	// GenAIClientOperationTimeToFirstChunkName is the histogram of the time from the start of a
	// streaming call (only those) to its first response body chunk, in seconds.
	GenAIClientOperationTimeToFirstChunkName = "gen_ai.client.operation.time_to_first_chunk"
	// GenAIClientOperationTimeToFirstChunkUnit is the unit of
	// gen_ai.client.operation.time_to_first_chunk (seconds).
	GenAIClientOperationTimeToFirstChunkUnit = "s"
	// GenAIClientOperationTimeToFirstChunkDescription is the description of
	// gen_ai.client.operation.time_to_first_chunk.
	GenAIClientOperationTimeToFirstChunkDescription = "Time to receive the first chunk of a streaming response."
)

// GenAIClientTokenUsageBuckets returns the explicit bucket boundaries of gen_ai.client.token.usage
// (powers of 4 from 1 to 67108864 tokens). Each call returns a new slice.
func GenAIClientTokenUsageBuckets() []float64 {
	return []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
}

// GenAIClientDurationBuckets returns the explicit bucket boundaries, in seconds, of
// gen_ai.client.operation.duration and gen_ai.client.operation.time_to_first_chunk (doubling from
// 0.01 to 81.92). Each call returns a new slice.
func GenAIClientDurationBuckets() []float64 {
	return []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
}

// GenAITokenTypeKey is the type of the tokens a gen_ai.client.token.usage measurement counts:
// [GenAITokenTypeInput] or [GenAITokenTypeOutput].
const GenAITokenTypeKey = attribute.Key("gen_ai.token.type")

// gen_ai.token.type values.
const (
	// GenAITokenTypeInput counts input (prompt) tokens: gen_ai.usage.input_tokens.
	GenAITokenTypeInput = "input"
	// GenAITokenTypeOutput counts output (completion) tokens: gen_ai.usage.output_tokens.
	GenAITokenTypeOutput = "output"
)

// Project metrics (gymtrace.*), NOT semantic conventions: they make a lost or partial capture visible
// without reading the capture directory.
const (
	// GymtraceCaptureCallsName counts captured calls (unit {call}), by [GymtraceDialectKey] and
	// [GymtraceErrorCategoryKey] (absent when the call succeeded).
	GymtraceCaptureCallsName = "gymtrace.capture.calls"
	// GymtraceCaptureCallsUnit is the unit of gymtrace.capture.calls.
	GymtraceCaptureCallsUnit = "{call}"
	// GymtraceCaptureCallsDescription is the description of gymtrace.capture.calls.
	GymtraceCaptureCallsDescription = "Captured model calls, by dialect and error category (absent on success)."

	// GymtraceCaptureBytesName counts captured payload bytes (unit By): the request and response
	// payload fields of the records, by [GymtraceCaptureDirectionKey].
	GymtraceCaptureBytesName = "gymtrace.capture.bytes"
	// GymtraceCaptureBytesUnit is the unit of gymtrace.capture.bytes (bytes).
	GymtraceCaptureBytesUnit = "By"
	// GymtraceCaptureBytesDescription is the description of gymtrace.capture.bytes.
	GymtraceCaptureBytesDescription = "Payload bytes captured: request, and response object plus response_raw."

	// GymtraceCaptureUncorrelatedCallsName counts calls to a captured endpoint that carried no
	// rollout id (unit {call}), by [GymtraceDialectKey].
	GymtraceCaptureUncorrelatedCallsName = "gymtrace.capture.uncorrelated_calls"
	// GymtraceCaptureUncorrelatedCallsUnit is the unit of gymtrace.capture.uncorrelated_calls.
	GymtraceCaptureUncorrelatedCallsUnit = "{call}"
	// GymtraceCaptureUncorrelatedCallsDescription is the description of
	// gymtrace.capture.uncorrelated_calls.
	GymtraceCaptureUncorrelatedCallsDescription = "Calls to a captured endpoint that carried no rollout id."

	// GymtraceCaptureBoundedCallsName counts captured calls whose capture stopped at a bound (SPEC
	// §0 D15; unit {call}), by [GymtraceCaptureBoundKindKey].
	GymtraceCaptureBoundedCallsName = "gymtrace.capture.bounded_calls"
	// GymtraceCaptureBoundedCallsUnit is the unit of gymtrace.capture.bounded_calls.
	GymtraceCaptureBoundedCallsUnit = "{call}"
	// GymtraceCaptureBoundedCallsDescription is the description of gymtrace.capture.bounded_calls.
	GymtraceCaptureBoundedCallsDescription = "Captured calls whose response capture stopped at a capture bound; forwarding went on."

	// GymtraceCaptureNearMissCallsName counts calls under the rollout prefix whose path is almost
	// a captured endpoint (SPEC §1.6; rollout.ClassifyNearMiss: forwarded, not captured, or captured
	// under another path than forwarded; unit {call}), by [GymtraceCaptureNearMissKindKey].
	GymtraceCaptureNearMissCallsName = "gymtrace.capture.near_miss_calls"
	// GymtraceCaptureNearMissCallsUnit is the unit of gymtrace.capture.near_miss_calls.
	GymtraceCaptureNearMissCallsUnit = "{call}"
	// GymtraceCaptureNearMissCallsDescription is the description of gymtrace.capture.near_miss_calls.
	GymtraceCaptureNearMissCallsDescription = "Calls under the rollout prefix whose path is almost a captured endpoint; forwarded as sent."
)

// GymtraceCaptureNearMissKindKey is the class of a gymtrace.capture.near_miss_calls measurement:
// one of rollout.NearMiss's kinds ("doubled_v1", "missing_v1", "slashes", ...). Not a semantic
// convention.
const GymtraceCaptureNearMissKindKey = attribute.Key("gymtrace.capture.near_miss.kind")

// GymtraceCaptureDirectionKey is the payload side a gymtrace.capture.bytes measurement counts:
// [GymtraceCaptureDirectionRequest] or [GymtraceCaptureDirectionResponse]. Not a semantic convention.
const GymtraceCaptureDirectionKey = attribute.Key("gymtrace.capture.direction")

// gymtrace.capture.direction values.
const (
	// GymtraceCaptureDirectionRequest counts the record's request (or request_raw) text.
	GymtraceCaptureDirectionRequest = "request"
	// GymtraceCaptureDirectionResponse counts the record's response object text plus response_raw.
	GymtraceCaptureDirectionResponse = "response"
)

// Span writer metrics (capture.Writer): what the span writer did with each span it was handed, for
// every kind of line and every adapter. Not semantic conventions.
const (
	// GymtraceCaptureWriterSpansName counts spans handed to a span writer (unit {span}), by
	// [GymtraceCaptureLineKindKey] and [GymtraceCaptureOutcomeKey].
	GymtraceCaptureWriterSpansName = "gymtrace.capture.writer.spans"
	// GymtraceCaptureWriterSpansUnit is the unit of gymtrace.capture.writer.spans.
	GymtraceCaptureWriterSpansUnit = "{span}"
	// GymtraceCaptureWriterSpansDescription is the description of gymtrace.capture.writer.spans.
	GymtraceCaptureWriterSpansDescription = "Spans handed to the capture span writer, by line kind and outcome."

	// GymtraceCaptureWriterDuplicatesName counts lines not appended because a line with the same
	// identity (a record's model_call_id, an observation's span) was already in the rollout file
	// (unit {line}), by [GymtraceCaptureLineKindKey]; their spans count as written.
	GymtraceCaptureWriterDuplicatesName = "gymtrace.capture.writer.duplicates"
	// GymtraceCaptureWriterDuplicatesUnit is the unit of gymtrace.capture.writer.duplicates.
	GymtraceCaptureWriterDuplicatesUnit = "{line}"
	// GymtraceCaptureWriterDuplicatesDescription is the description of gymtrace.capture.writer.duplicates.
	GymtraceCaptureWriterDuplicatesDescription = "Lines skipped because the rollout file already held them (a retry or a second sender)."

	// GymtraceCaptureWriterBytesName counts the bytes of the lines a span writer appended durably
	// (unit By), by [GymtraceCaptureLineKindKey].
	GymtraceCaptureWriterBytesName = "gymtrace.capture.writer.bytes"
	// GymtraceCaptureWriterBytesUnit is the unit of gymtrace.capture.writer.bytes (bytes).
	GymtraceCaptureWriterBytesUnit = "By"
	// GymtraceCaptureWriterBytesDescription is the description of gymtrace.capture.writer.bytes.
	GymtraceCaptureWriterBytesDescription = "Bytes of lines appended to rollout files and fsynced."
)

// GymtraceCaptureLineKindKey is the kind of line a span writer writes: [GymtraceCaptureLineKindModelCall]
// or [GymtraceCaptureLineKindObservation]. Not a semantic convention.
const GymtraceCaptureLineKindKey = attribute.Key("gymtrace.capture.line_kind")

// gymtrace.capture.line_kind values.
const (
	// GymtraceCaptureLineKindModelCall is a capture record (<rollout_id>.capture.jsonl).
	GymtraceCaptureLineKindModelCall = "model_call"
	// GymtraceCaptureLineKindObservation is an observation line (<rollout_id>.observations.jsonl).
	GymtraceCaptureLineKindObservation = "observation"
)

// GymtraceCaptureOutcomeKey is what a span writer did with a span: written, partial, ignored,
// rejected, failed or written_dir_unsynced (capture.Outcome). Not a semantic convention.
const GymtraceCaptureOutcomeKey = attribute.Key("gymtrace.capture.outcome")

// GymtraceCaptureWriterUnattributedName counts the spans a span writer wrote (or tried to write)
// to the unattributed file, <store dir>/_unattributed.observations.jsonl (SPEC §0 D18): spans of its
// kind that name no rollout on the span or its resource and whose trace carried none within the
// writer's trace window (unit {span}), by [GymtraceCaptureLineKindKey] and
// [GymtraceCaptureUnattributedReasonKey]. Their outcome counts in gymtrace.capture.writer.spans as
// usual. Not a semantic convention.
const (
	GymtraceCaptureWriterUnattributedName = "gymtrace.capture.writer.unattributed"
	// GymtraceCaptureWriterUnattributedUnit is the unit of gymtrace.capture.writer.unattributed.
	GymtraceCaptureWriterUnattributedUnit = "{span}"
	// GymtraceCaptureWriterUnattributedDescription is the description of gymtrace.capture.writer.unattributed.
	GymtraceCaptureWriterUnattributedDescription = "Spans written to _unattributed.observations.jsonl because neither they, their resource nor their trace named a rollout (SPEC D18)."
)

// GymtraceCaptureUnattributedReasonKey says why a span went to the unattributed file (SPEC §0
// D18): one of the GymtraceUnattributed* values. It is the metric attribute of
// gymtrace.capture.writer.unattributed and the "unattributed_reason" of the span's line. Not a
// semantic convention.
const GymtraceCaptureUnattributedReasonKey = attribute.Key("gymtrace.capture.unattributed_reason")

// gymtrace.capture.unattributed_reason values (SPEC §0 D18).
const (
	// GymtraceUnattributedNoRolloutID: the trace window's time ran out and no span of the trace
	// the writer saw, before or during it, carried a gymtrace.rollout.id.
	GymtraceUnattributedNoRolloutID = "no_rollout_id"
	// GymtraceUnattributedNoTraceID: the span has no valid trace id, so no trace to inherit from.
	GymtraceUnattributedNoTraceID = "no_trace_id"
	// GymtraceUnattributedWindowFull: the span was held when the trace window reached its bound of
	// traces or held spans; its trace, the oldest held, was written out early.
	GymtraceUnattributedWindowFull = "window_full"
	// GymtraceUnattributedFlushed: ForceFlush or Shutdown came before any span of its trace
	// carried a rollout id (or the span arrived after Shutdown).
	GymtraceUnattributedFlushed = "flushed"
)

// GymtraceObservationKindKey is the kind of observation a span records, the "kind" of its
// observation line (the record types of SPEC §6.2): "agent_invocation", "tool_call", "context_compaction" or "sandbox".
// Not a semantic convention.
const GymtraceObservationKindKey = attribute.Key("gymtrace.observation.kind")
