package agentobs

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// BundleSource is the source of the bundles this package builds from spans ([BundleFromSpans],
// [BuildBundle], [Recorder.Bundle]).
const BundleSource = "gymtrace"

// ObservationSpan is everything the span-to-observation mapping reads from one span: identity,
// parent, timing, status, attributes, events and links. Each span source fills it through a small
// adapter — [SpanFromReadOnly] for the otel-go SDK, [ObservationLine.Span] for the observations
// file, the recorder for what it recorded, and later the Collector exporter for pdata spans — so
// they all share one mapping ([BundleFromSpans]).
type ObservationSpan struct {
	TraceID      trace.TraceID
	SpanID       trace.SpanID
	ParentSpanID trace.SpanID   // zero when the span has no parent
	Name         string         // not read by the mapping; kept for people reading the file
	Kind         trace.SpanKind // not read by the mapping; kept for people reading the file
	StartTime    time.Time
	EndTime      time.Time // zero: the span has not ended (only the recorder's own view)
	StatusCode   codes.Code
	Attributes   capture.AttributeLookup // nil means no attributes
	Events       []SpanEvent
	Links        []SpanLink
	// DroppedEvents and DroppedLinks count events and links the span lost to count limits.
	DroppedEvents int
	DroppedLinks  int
}

// SpanEvent is one span event as the mapping reads it.
type SpanEvent struct {
	Name       string
	Time       time.Time
	Attributes capture.AttributeLookup // nil means no attributes
}

// SpanLink is one span link as the mapping reads it.
type SpanLink struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Attributes capture.AttributeLookup // nil means no attributes
}

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
