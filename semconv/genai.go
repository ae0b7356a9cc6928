package semconv

import "go.opentelemetry.io/otel/attribute"

// GenAI semantic-convention keys (conventions tracked by semconv/v1.41.0; see doc.go).
const (
	// GenAIOperationNameKey is the operation: "chat" for every captured model call.
	GenAIOperationNameKey = attribute.Key("gen_ai.operation.name")
	// GenAIProviderNameKey is the provider: "openai" (Responses, Chat Completions) or "anthropic" (Messages).
	GenAIProviderNameKey = attribute.Key("gen_ai.provider.name")
	// GenAIRequestModelKey is the model named in the request body.
	GenAIRequestModelKey = attribute.Key("gen_ai.request.model")
	// GenAIRequestStreamKey is true when the request asked for a streamed (SSE) response.
	GenAIRequestStreamKey = attribute.Key("gen_ai.request.stream")
	// GenAIResponseModelKey is the model named in the response.
	GenAIResponseModelKey = attribute.Key("gen_ai.response.model")
	// GenAIResponseIDKey is the provider's response id.
	GenAIResponseIDKey = attribute.Key("gen_ai.response.id")
	// GenAIResponseFinishReasonsKey is a string slice of finish/stop reasons.
	GenAIResponseFinishReasonsKey = attribute.Key("gen_ai.response.finish_reasons")
	// GenAIResponseTimeToFirstChunkKey is the time to the first response body chunk, in seconds (float).
	GenAIResponseTimeToFirstChunkKey = attribute.Key("gen_ai.response.time_to_first_chunk")
	// GenAIUsageInputTokensKey is the input token count (incl. Anthropic cache reads/writes, SPEC §3.5).
	GenAIUsageInputTokensKey = attribute.Key("gen_ai.usage.input_tokens")
	// GenAIUsageOutputTokensKey is the output token count.
	GenAIUsageOutputTokensKey = attribute.Key("gen_ai.usage.output_tokens")
	// GenAIUsageCacheReadInputTokensKey is the number of input tokens served from the provider cache.
	GenAIUsageCacheReadInputTokensKey = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	// GenAIUsageCacheCreationInputTokensKey is the number of input tokens written to the provider cache.
	GenAIUsageCacheCreationInputTokensKey = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	// GenAIUsageReasoningOutputTokensKey is the number of output tokens spent on reasoning.
	GenAIUsageReasoningOutputTokensKey = attribute.Key("gen_ai.usage.reasoning.output_tokens")
)

// Other OpenTelemetry semantic-convention keys gymtrace emits.
const (
	// ErrorTypeKey is the error category (SPEC §3.3) of a failed call.
	ErrorTypeKey = attribute.Key("error.type")
	// HTTPResponseStatusCodeKey is the HTTP status the upstream answered with.
	HTTPResponseStatusCodeKey = attribute.Key("http.response.status_code")
	// ServerAddressKey is the upstream's host name or IP.
	ServerAddressKey = attribute.Key("server.address")
	// ServerPortKey is the upstream's port.
	ServerPortKey = attribute.Key("server.port")
)

// GenAIOperationNameChat is the gen_ai.operation.name value of every captured model call.
const GenAIOperationNameChat = "chat"

// Provider names (gen_ai.provider.name values).
const (
	GenAIProviderNameOpenAI    = "openai"
	GenAIProviderNameAnthropic = "anthropic"
)
