package agentobs

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// BundleSource is the source of the bundles this package builds from spans ([BundleFromSpans],
// [BuildBundle], [Recorder.Bundle]).
const BundleSource = "gymtrace"

// ObservationSpan is the span view the span-to-observation mapping reads: the neutral
// [capture.Span] (identity, parent, timing, status, attributes, events and links) that every span
// source fills through a small adapter — sdkspan.FromReadOnly for the otel-go SDK,
// [ObservationLine.Span] for the observations file, the recorder for what it recorded, and the
// Collector exporter for pdata spans — so they all share one mapping ([BundleFromSpans]) and one
// writer ([ObservationLines] plugged into [capture.Writer]). Name and Kind are not read by the
// mapping; they are kept for people reading the file. A zero EndTime is a span that has not ended
// (only the recorder's own view).
type ObservationSpan = capture.Span

// SpanEvent is one span event as the mapping reads it.
type SpanEvent = capture.SpanEvent

// SpanLink is one span link as the mapping reads it.
type SpanLink = capture.SpanLink

// spanAttributeKeys lists every span attribute the mapping reads, and the rollout id: the
// observations file keeps exactly these, so a bundle built from the file equals one built from the
// spans.
var spanAttributeKeys = []attribute.Key{
	semconv.GenAIOperationNameKey,
	semconv.GenAIConversationCompactedKey,
	semconv.GenAIToolNameKey,
	semconv.GenAIToolCallIDKey,
	semconv.ErrorTypeKey,
	semconv.GymtraceRolloutIDKey,
	semconv.GymtraceObservationStatusKey,
	semconv.GymtraceAgentInvocationIDKey,
	semconv.GymtraceAgentParentInvocationIDKey,
	semconv.GymtraceAgentSpawnedByToolCallIDKey,
	semconv.GymtraceModelCallIDsKey,
	semconv.GymtraceToolTimingSourceKey,
	semconv.GymtraceSandboxRoleKey,
	semconv.GymtraceSandboxProviderKey,
	semconv.GymtraceSandboxIDKey,
	semconv.GymtraceSandboxExitCodeKey,
	semconv.GymtraceSandboxWallTimeKey,
	semconv.GymtraceSandboxCPUTimeKey,
	semconv.GymtraceSandboxPeakMemoryKey,
	semconv.GymtraceSandboxResourceUsageSourceKey,
	semconv.GymtraceCompactionTriggerKey,
	semconv.GymtraceCompactionTokensBeforeKey,
	semconv.GymtraceCompactionTokensAfterKey,
	semconv.GymtraceCompactionSummaryKey,
	semconv.GymtraceCompactionFirstKeptItemIDKey,
	semconv.GymtraceCompactionBeforeModelCallIDKey,
	semconv.GymtraceCompactionAfterModelCallIDKey,
}

// refAttributeKeys lists the attributes of a gymtrace.model_call event or a link that make up a
// model-call reference.
var refAttributeKeys = []attribute.Key{
	semconv.GymtraceModelCallIDKey,
	semconv.GenAIResponseIDKey,
	semconv.GymtraceModelRefTypeKey,
	semconv.GymtraceModelRefNameKey,
}

// ObservationKind returns the record kind of an observation span from its attributes, and false
// for any other span:
//
//   - gen_ai.operation.name "invoke_agent" → [KindAgentInvocation];
//   - gen_ai.operation.name "execute_tool" → [KindToolCall];
//   - a gymtrace.sandbox.role attribute → [KindSandbox];
//   - gen_ai.conversation.compacted = true on a span without gen_ai.operation.name →
//     [KindContextCompaction] (model-call spans also carry gen_ai.conversation.compacted when
//     their request or response holds compacted state, but the conventions require them to name
//     their operation, so they are never taken for a compaction).
//
// Rules are tried in this order. Safe for concurrent use.
func ObservationKind(a capture.AttributeLookup) (string, bool) {
	if a == nil {
		return "", false
	}
	op, hasOp := a.Lookup(string(semconv.GenAIOperationNameKey))
	if hasOp && op.Type() == attribute.STRING {
		switch op.AsString() {
		case semconv.GenAIOperationNameInvokeAgent:
			return KindAgentInvocation, true
		case semconv.GenAIOperationNameExecuteTool:
			return KindToolCall, true
		}
	}
	if _, ok := a.Lookup(string(semconv.GymtraceSandboxRoleKey)); ok {
		return KindSandbox, true
	}
	if c, ok := a.Lookup(string(semconv.GenAIConversationCompactedKey)); ok && !hasOp &&
		c.Type() == attribute.BOOL && c.AsBool() {
		return KindContextCompaction, true
	}
	return "", false
}

// RolloutIDOf returns the span's gymtrace.rollout.id when it is a non-empty string.
func RolloutIDOf(a capture.AttributeLookup) (string, bool) {
	if a == nil {
		return "", false
	}
	v, ok := a.Lookup(string(semconv.GymtraceRolloutIDKey))
	if !ok || v.Type() != attribute.STRING || v.AsString() == "" {
		return "", false
	}
	return v.AsString(), true
}
