package semconv

import "go.opentelemetry.io/otel/attribute"

// GenAI semantic-convention keys of the conventions tracked by otel-go's semconv/v1.41.0 (see
// doc.go). The keys that exist only in the newer GenAI conventions are in conventions.go.
const (
	// GenAIOperationNameKey is the operation: [GenAIOperationNameChat] for every captured model
	// call; [GenAIOperationNameInvokeAgent] and [GenAIOperationNameExecuteTool] for agent
	// observations.
	GenAIOperationNameKey = attribute.Key("gen_ai.operation.name")
	// GenAIProviderNameKey is the provider: [GenAIProviderNameOpenAI] (Responses, Chat Completions)
	// or [GenAIProviderNameAnthropic] (Messages); see [ProviderForDialect].
	GenAIProviderNameKey = attribute.Key("gen_ai.provider.name")
	// GenAIConversationIDKey is the conversation (session, thread) id an agent observation belongs to.
	GenAIConversationIDKey = attribute.Key("gen_ai.conversation.id")

	// GenAIRequestModelKey is the model named in the request body (string).
	GenAIRequestModelKey = attribute.Key("gen_ai.request.model")
	// GenAIRequestStreamKey is true when the request asked for a streamed (SSE) response (bool).
	GenAIRequestStreamKey = attribute.Key("gen_ai.request.stream")
	// GenAIRequestTemperatureKey is the request's temperature (double).
	GenAIRequestTemperatureKey = attribute.Key("gen_ai.request.temperature")
	// GenAIRequestTopPKey is the request's top_p (double).
	GenAIRequestTopPKey = attribute.Key("gen_ai.request.top_p")
	// GenAIRequestTopKKey is the request's top_k (double in these conventions).
	GenAIRequestTopKKey = attribute.Key("gen_ai.request.top_k")
	// GenAIRequestMaxTokensKey is the most tokens the request lets the model generate (int): the
	// request's max_completion_tokens, max_output_tokens or max_tokens.
	GenAIRequestMaxTokensKey = attribute.Key("gen_ai.request.max_tokens")
	// GenAIRequestSeedKey is the request's seed (int).
	GenAIRequestSeedKey = attribute.Key("gen_ai.request.seed")
	// GenAIRequestFrequencyPenaltyKey is the request's frequency_penalty (double).
	GenAIRequestFrequencyPenaltyKey = attribute.Key("gen_ai.request.frequency_penalty")
	// GenAIRequestPresencePenaltyKey is the request's presence_penalty (double).
	GenAIRequestPresencePenaltyKey = attribute.Key("gen_ai.request.presence_penalty")
	// GenAIRequestStopSequencesKey is the request's stop sequences (string slice): Chat stop,
	// Anthropic stop_sequences.
	GenAIRequestStopSequencesKey = attribute.Key("gen_ai.request.stop_sequences")
	// GenAIRequestChoiceCountKey is the number of choices the request asked for (int, Chat n), set
	// only when it is not 1.
	GenAIRequestChoiceCountKey = attribute.Key("gen_ai.request.choice.count")

	// GenAIResponseModelKey is the model named in the response (string).
	GenAIResponseModelKey = attribute.Key("gen_ai.response.model")
	// GenAIResponseIDKey is the provider's response id (string).
	GenAIResponseIDKey = attribute.Key("gen_ai.response.id")
	// GenAIResponseFinishReasonsKey is the string slice of finish/stop reasons as the provider
	// reported them.
	GenAIResponseFinishReasonsKey = attribute.Key("gen_ai.response.finish_reasons")
	// GenAIResponseTimeToFirstChunkKey is the time from the start of the call to the first response
	// body chunk, in seconds (double).
	GenAIResponseTimeToFirstChunkKey = attribute.Key("gen_ai.response.time_to_first_chunk")

	// GenAIUsageInputTokensKey is the input token count (int; includes Anthropic cache reads and
	// writes, SPEC §3.5).
	GenAIUsageInputTokensKey = attribute.Key("gen_ai.usage.input_tokens")
	// GenAIUsageOutputTokensKey is the output token count (int).
	GenAIUsageOutputTokensKey = attribute.Key("gen_ai.usage.output_tokens")
	// GenAIUsageCacheReadInputTokensKey is the number of input tokens served from the provider
	// cache (int).
	GenAIUsageCacheReadInputTokensKey = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	// GenAIUsageCacheCreationInputTokensKey is the number of input tokens written to the provider
	// cache (int). The newer conventions rename it [GenAIUsageCacheWriteInputTokensKey]; use
	// [GenAIConventions.UsageCacheWriteInputTokensKey] to pick the one to emit.
	GenAIUsageCacheCreationInputTokensKey = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	// GenAIUsageReasoningOutputTokensKey is the number of output tokens spent on reasoning (int).
	GenAIUsageReasoningOutputTokensKey = attribute.Key("gen_ai.usage.reasoning.output_tokens")

	// GenAIInputMessagesKey is the chat history sent to the model, as a JSON string following the
	// conventions' input-messages JSON schema (opt-in: it holds user content).
	GenAIInputMessagesKey = attribute.Key("gen_ai.input.messages")
	// GenAIOutputMessagesKey is the messages the model returned, one per choice, as a JSON string
	// following the conventions' output-messages JSON schema (opt-in).
	GenAIOutputMessagesKey = attribute.Key("gen_ai.output.messages")
	// GenAISystemInstructionsKey is the system instructions given apart from the chat history
	// (Responses instructions, Anthropic system), as a JSON string array of parts (opt-in).
	GenAISystemInstructionsKey = attribute.Key("gen_ai.system_instructions")

	// GenAIAgentNameKey is the agent's human-readable name (agent observations).
	GenAIAgentNameKey = attribute.Key("gen_ai.agent.name")
	// GenAIAgentIDKey is the agent's id (agent observations).
	GenAIAgentIDKey = attribute.Key("gen_ai.agent.id")
	// GenAIToolNameKey is the name of the tool an execute_tool span ran.
	GenAIToolNameKey = attribute.Key("gen_ai.tool.name")
	// GenAIToolCallIDKey is the model's id of the tool call an execute_tool span ran.
	GenAIToolCallIDKey = attribute.Key("gen_ai.tool.call.id")
	// GenAIToolTypeKey is the tool type ("function", "extension", "datastore").
	GenAIToolTypeKey = attribute.Key("gen_ai.tool.type")
)

// Other OpenTelemetry semantic-convention keys gymtrace emits (same conventions version).
const (
	// ErrorTypeKey is the error category (SPEC §3.3, one of the ErrorCategory* values) of a failed
	// call.
	ErrorTypeKey = attribute.Key("error.type")
	// HTTPResponseStatusCodeKey is the HTTP status the upstream answered with (int).
	HTTPResponseStatusCodeKey = attribute.Key("http.response.status_code")
	// ServerAddressKey is the upstream's host name or IP.
	ServerAddressKey = attribute.Key("server.address")
	// ServerPortKey is the upstream's port (int).
	ServerPortKey = attribute.Key("server.port")
)

// gen_ai.operation.name values.
const (
	// GenAIOperationNameChat is the operation of every captured model call.
	GenAIOperationNameChat = "chat"
	// GenAIOperationNameInvokeAgent is the operation of an agent invocation span.
	GenAIOperationNameInvokeAgent = "invoke_agent"
	// GenAIOperationNameExecuteTool is the operation of a tool execution span.
	GenAIOperationNameExecuteTool = "execute_tool"
)

// gen_ai.provider.name values.
const (
	// GenAIProviderNameOpenAI is the provider of the Responses and Chat Completions dialects.
	GenAIProviderNameOpenAI = "openai"
	// GenAIProviderNameAnthropic is the provider of the Messages dialect.
	GenAIProviderNameAnthropic = "anthropic"
)

// ChatSpanName returns the name of a model-call span: "chat {gen_ai.request.model}", or "chat" when
// the model is unknown ("").
func ChatSpanName(model string) string { return joinName(GenAIOperationNameChat, model) }

// GenAIOperationName returns the gen_ai.operation.name attribute.
func GenAIOperationName(v string) attribute.KeyValue { return GenAIOperationNameKey.String(v) }

// GenAIProviderName returns the gen_ai.provider.name attribute.
func GenAIProviderName(v string) attribute.KeyValue { return GenAIProviderNameKey.String(v) }

// GenAIRequestModel returns the gen_ai.request.model attribute.
func GenAIRequestModel(v string) attribute.KeyValue { return GenAIRequestModelKey.String(v) }

// GenAIRequestStream returns the gen_ai.request.stream attribute.
func GenAIRequestStream(v bool) attribute.KeyValue { return GenAIRequestStreamKey.Bool(v) }

// GenAIRequestTemperature returns the gen_ai.request.temperature attribute.
func GenAIRequestTemperature(v float64) attribute.KeyValue {
	return GenAIRequestTemperatureKey.Float64(v)
}

// GenAIRequestTopP returns the gen_ai.request.top_p attribute.
func GenAIRequestTopP(v float64) attribute.KeyValue { return GenAIRequestTopPKey.Float64(v) }

// GenAIRequestTopK returns the gen_ai.request.top_k attribute as a double, its type in these
// conventions (see [GenAIConventions.RequestTopK] for the newer int form).
func GenAIRequestTopK(v float64) attribute.KeyValue { return GenAIRequestTopKKey.Float64(v) }

// GenAIRequestMaxTokens returns the gen_ai.request.max_tokens attribute.
func GenAIRequestMaxTokens(v int64) attribute.KeyValue { return GenAIRequestMaxTokensKey.Int64(v) }

// GenAIRequestSeed returns the gen_ai.request.seed attribute.
func GenAIRequestSeed(v int64) attribute.KeyValue { return GenAIRequestSeedKey.Int64(v) }

// GenAIRequestFrequencyPenalty returns the gen_ai.request.frequency_penalty attribute.
func GenAIRequestFrequencyPenalty(v float64) attribute.KeyValue {
	return GenAIRequestFrequencyPenaltyKey.Float64(v)
}

// GenAIRequestPresencePenalty returns the gen_ai.request.presence_penalty attribute.
func GenAIRequestPresencePenalty(v float64) attribute.KeyValue {
	return GenAIRequestPresencePenaltyKey.Float64(v)
}

// GenAIRequestStopSequences returns the gen_ai.request.stop_sequences attribute.
func GenAIRequestStopSequences(v ...string) attribute.KeyValue {
	return GenAIRequestStopSequencesKey.StringSlice(v)
}

// GenAIRequestChoiceCount returns the gen_ai.request.choice.count attribute.
func GenAIRequestChoiceCount(v int64) attribute.KeyValue {
	return GenAIRequestChoiceCountKey.Int64(v)
}

// GenAIResponseModel returns the gen_ai.response.model attribute.
func GenAIResponseModel(v string) attribute.KeyValue { return GenAIResponseModelKey.String(v) }

// GenAIResponseID returns the gen_ai.response.id attribute.
func GenAIResponseID(v string) attribute.KeyValue { return GenAIResponseIDKey.String(v) }

// GenAIResponseFinishReasons returns the gen_ai.response.finish_reasons attribute.
func GenAIResponseFinishReasons(v ...string) attribute.KeyValue {
	return GenAIResponseFinishReasonsKey.StringSlice(v)
}

// GenAIResponseTimeToFirstChunk returns the gen_ai.response.time_to_first_chunk attribute (seconds).
func GenAIResponseTimeToFirstChunk(seconds float64) attribute.KeyValue {
	return GenAIResponseTimeToFirstChunkKey.Float64(seconds)
}

// GenAIInputMessages returns the gen_ai.input.messages attribute from its JSON text.
func GenAIInputMessages(json string) attribute.KeyValue { return GenAIInputMessagesKey.String(json) }

// GenAIOutputMessages returns the gen_ai.output.messages attribute from its JSON text.
func GenAIOutputMessages(json string) attribute.KeyValue {
	return GenAIOutputMessagesKey.String(json)
}

// GenAISystemInstructions returns the gen_ai.system_instructions attribute from its JSON text.
func GenAISystemInstructions(json string) attribute.KeyValue {
	return GenAISystemInstructionsKey.String(json)
}

// GenAIAgentName returns the gen_ai.agent.name attribute.
func GenAIAgentName(v string) attribute.KeyValue { return GenAIAgentNameKey.String(v) }

// GenAIAgentID returns the gen_ai.agent.id attribute.
func GenAIAgentID(v string) attribute.KeyValue { return GenAIAgentIDKey.String(v) }

// GenAIToolName returns the gen_ai.tool.name attribute.
func GenAIToolName(v string) attribute.KeyValue { return GenAIToolNameKey.String(v) }

// GenAIToolCallID returns the gen_ai.tool.call.id attribute.
func GenAIToolCallID(v string) attribute.KeyValue { return GenAIToolCallIDKey.String(v) }

// ErrorType returns the error.type attribute.
func ErrorType(v string) attribute.KeyValue { return ErrorTypeKey.String(v) }

// HTTPResponseStatusCode returns the http.response.status_code attribute.
func HTTPResponseStatusCode(v int) attribute.KeyValue { return HTTPResponseStatusCodeKey.Int(v) }
