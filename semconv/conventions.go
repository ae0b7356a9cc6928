package semconv

import (
	"math"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// Keys that exist only in the newer GenAI conventions (open-telemetry/semantic-conventions-genai,
// after semantic-conventions v1.41.0). The first is emitted only under
// [GenAIConventionsLatestExperimental], in place of the v1.41.0 name it renames; the others have no
// v1.41.0 counterpart, so they are always emitted where they apply.
const (
	// GenAIUsageCacheWriteInputTokensKey is the newer name of
	// [GenAIUsageCacheCreationInputTokensKey]: input tokens written to the provider cache (int).
	GenAIUsageCacheWriteInputTokensKey = attribute.Key("gen_ai.usage.cache_write.input_tokens")
	// GenAIConversationCompactedKey is true on a span whose conversation history was compacted
	// (summarised) — set only when true, never false. A model call carries it when its request or
	// response holds compacted conversation state (a Responses "compaction" item, an Anthropic
	// "compaction" content block); an agent's compaction span always carries it.
	GenAIConversationCompactedKey = attribute.Key("gen_ai.conversation.compacted")
	// GenAIRequestPreviousResponseIDKey is the id of the previous response the request continues
	// (Responses previous_response_id).
	GenAIRequestPreviousResponseIDKey = attribute.Key("gen_ai.request.previous_response.id")
	// GenAIRequestReasoningLevelKey is the reasoning (thinking) effort level the request asked for,
	// the exact string sent: Responses reasoning.effort, Chat reasoning_effort, Anthropic
	// output_config.effort.
	GenAIRequestReasoningLevelKey = attribute.Key("gen_ai.request.reasoning.level")
)

// GenAIConversationCompacted returns the gen_ai.conversation.compacted attribute.
func GenAIConversationCompacted(v bool) attribute.KeyValue {
	return GenAIConversationCompactedKey.Bool(v)
}

// GenAIRequestPreviousResponseID returns the gen_ai.request.previous_response.id attribute.
func GenAIRequestPreviousResponseID(v string) attribute.KeyValue {
	return GenAIRequestPreviousResponseIDKey.String(v)
}

// GenAIRequestReasoningLevel returns the gen_ai.request.reasoning.level attribute.
func GenAIRequestReasoningLevel(v string) attribute.KeyValue {
	return GenAIRequestReasoningLevelKey.String(v)
}

// StabilityOptInEnv is the environment variable that selects the GenAI conventions version:
// a comma-separated list of category values, of which gymtrace reads
// [StabilityOptInGenAILatestExperimental].
const StabilityOptInEnv = "OTEL_SEMCONV_STABILITY_OPT_IN"

// StabilityOptInGenAILatestExperimental is the [StabilityOptInEnv] value that switches to
// [GenAIConventionsLatestExperimental].
const StabilityOptInGenAILatestExperimental = "gen_ai_latest_experimental"

// GenAIConventions selects which GenAI conventions version the model-call spans follow where the
// versions differ. The zero value is [GenAIConventionsV1_41].
type GenAIConventions uint8

const (
	// GenAIConventionsV1_41 is the version tracked by otel-go's semconv/v1.41.0 ([SchemaURL]), the
	// default.
	GenAIConventionsV1_41 GenAIConventions = iota
	// GenAIConventionsLatestExperimental is the newest GenAI conventions gymtrace knows
	// (open-telemetry/semantic-conventions-genai): gen_ai.usage.cache_write.input_tokens replaces
	// gen_ai.usage.cache_creation.input_tokens, and gen_ai.request.top_k is an int.
	GenAIConventionsLatestExperimental
)

// String returns "v1.41.0" or "latest_experimental".
func (c GenAIConventions) String() string {
	if c == GenAIConventionsLatestExperimental {
		return "latest_experimental"
	}
	return "v1.41.0"
}

// ParseGenAIConventions returns the conventions an [StabilityOptInEnv] value selects:
// [GenAIConventionsLatestExperimental] when its comma-separated list holds
// "gen_ai_latest_experimental" (entries trimmed of spaces, compared case-insensitively), else
// [GenAIConventionsV1_41]. Unknown entries are ignored, as other instrumentations read them.
func ParseGenAIConventions(optIn string) GenAIConventions {
	for _, v := range strings.Split(optIn, ",") {
		if strings.EqualFold(strings.TrimSpace(v), StabilityOptInGenAILatestExperimental) {
			return GenAIConventionsLatestExperimental
		}
	}
	return GenAIConventionsV1_41
}

// GenAIConventionsFromEnv returns ParseGenAIConventions(os.Getenv(StabilityOptInEnv)). Call it once,
// when building a tracer's configuration, never per span.
func GenAIConventionsFromEnv() GenAIConventions {
	return ParseGenAIConventions(os.Getenv(StabilityOptInEnv))
}

// UsageCacheWriteInputTokensKey returns the key of the cache-write token count:
// gen_ai.usage.cache_creation.input_tokens under v1.41.0, gen_ai.usage.cache_write.input_tokens
// under the latest experimental conventions.
func (c GenAIConventions) UsageCacheWriteInputTokensKey() attribute.Key {
	if c == GenAIConventionsLatestExperimental {
		return GenAIUsageCacheWriteInputTokensKey
	}
	return GenAIUsageCacheCreationInputTokensKey
}

// UsageCacheWriteInputTokens returns the cache-write token count attribute under c (see
// [GenAIConventions.UsageCacheWriteInputTokensKey]).
func (c GenAIConventions) UsageCacheWriteInputTokens(v int64) attribute.KeyValue {
	return c.UsageCacheWriteInputTokensKey().Int64(v)
}

// RequestTopK returns the gen_ai.request.top_k attribute under c: a double under v1.41.0; under the
// latest experimental conventions an int when v is integral, else the double (never rounded).
func (c GenAIConventions) RequestTopK(v float64) attribute.KeyValue {
	if c == GenAIConventionsLatestExperimental && math.Abs(v) < 1<<53 && v == math.Trunc(v) {
		return GenAIRequestTopKKey.Int64(int64(v))
	}
	return GenAIRequestTopKKey.Float64(v)
}
