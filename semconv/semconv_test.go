package semconv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	otelsemconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// TestTracksOtelSemconvV1_41 pins the claim of doc.go: every key and value this package shares with
// otel-go's semconv/v1.41.0 is spelled exactly as there, with the same schema URL.
func TestTracksOtelSemconvV1_41(t *testing.T) {
	assert.Equal(t, otelsemconv.SchemaURL, SchemaURL)
	keys := []struct{ ours, theirs attribute.Key }{
		{GenAIOperationNameKey, otelsemconv.GenAIOperationNameKey},
		{GenAIProviderNameKey, otelsemconv.GenAIProviderNameKey},
		{GenAIConversationIDKey, otelsemconv.GenAIConversationIDKey},
		{GenAIRequestModelKey, otelsemconv.GenAIRequestModelKey},
		{GenAIRequestStreamKey, otelsemconv.GenAIRequestStreamKey},
		{GenAIRequestTemperatureKey, otelsemconv.GenAIRequestTemperatureKey},
		{GenAIRequestTopPKey, otelsemconv.GenAIRequestTopPKey},
		{GenAIRequestTopKKey, otelsemconv.GenAIRequestTopKKey},
		{GenAIRequestMaxTokensKey, otelsemconv.GenAIRequestMaxTokensKey},
		{GenAIRequestSeedKey, otelsemconv.GenAIRequestSeedKey},
		{GenAIRequestFrequencyPenaltyKey, otelsemconv.GenAIRequestFrequencyPenaltyKey},
		{GenAIRequestPresencePenaltyKey, otelsemconv.GenAIRequestPresencePenaltyKey},
		{GenAIRequestStopSequencesKey, otelsemconv.GenAIRequestStopSequencesKey},
		{GenAIRequestChoiceCountKey, otelsemconv.GenAIRequestChoiceCountKey},
		{GenAIResponseModelKey, otelsemconv.GenAIResponseModelKey},
		{GenAIResponseIDKey, otelsemconv.GenAIResponseIDKey},
		{GenAIResponseFinishReasonsKey, otelsemconv.GenAIResponseFinishReasonsKey},
		{GenAIResponseTimeToFirstChunkKey, otelsemconv.GenAIResponseTimeToFirstChunkKey},
		{GenAIUsageInputTokensKey, otelsemconv.GenAIUsageInputTokensKey},
		{GenAIUsageOutputTokensKey, otelsemconv.GenAIUsageOutputTokensKey},
		{GenAIUsageCacheReadInputTokensKey, otelsemconv.GenAIUsageCacheReadInputTokensKey},
		{GenAIUsageCacheCreationInputTokensKey, otelsemconv.GenAIUsageCacheCreationInputTokensKey},
		{GenAIUsageReasoningOutputTokensKey, otelsemconv.GenAIUsageReasoningOutputTokensKey},
		{GenAIInputMessagesKey, otelsemconv.GenAIInputMessagesKey},
		{GenAIOutputMessagesKey, otelsemconv.GenAIOutputMessagesKey},
		{GenAISystemInstructionsKey, otelsemconv.GenAISystemInstructionsKey},
		{GenAIAgentNameKey, otelsemconv.GenAIAgentNameKey},
		{GenAIAgentIDKey, otelsemconv.GenAIAgentIDKey},
		{GenAIToolNameKey, otelsemconv.GenAIToolNameKey},
		{GenAIToolCallIDKey, otelsemconv.GenAIToolCallIDKey},
		{GenAIToolTypeKey, otelsemconv.GenAIToolTypeKey},
		{GenAITokenTypeKey, otelsemconv.GenAITokenTypeKey},
		{ErrorTypeKey, otelsemconv.ErrorTypeKey},
		{HTTPResponseStatusCodeKey, otelsemconv.HTTPResponseStatusCodeKey},
		{ServerAddressKey, otelsemconv.ServerAddressKey},
		{ServerPortKey, otelsemconv.ServerPortKey},
	}
	for _, k := range keys {
		assert.Equal(t, k.theirs, k.ours)
	}
	values := []struct {
		ours   string
		theirs attribute.KeyValue
	}{
		{GenAIOperationNameChat, otelsemconv.GenAIOperationNameChat},
		{GenAIOperationNameInvokeAgent, otelsemconv.GenAIOperationNameInvokeAgent},
		{GenAIOperationNameExecuteTool, otelsemconv.GenAIOperationNameExecuteTool},
		{GenAIProviderNameOpenAI, otelsemconv.GenAIProviderNameOpenAI},
		{GenAIProviderNameAnthropic, otelsemconv.GenAIProviderNameAnthropic},
	}
	for _, v := range values {
		assert.Equal(t, v.theirs.Value.AsString(), v.ours)
	}
}

// TestNewerKeysAreNotInV1_41 pins which keys exist only in the newer conventions (doc.go).
func TestNewerKeysAreNotInV1_41(t *testing.T) {
	for _, k := range []attribute.Key{
		GenAIUsageCacheWriteInputTokensKey, GenAIConversationCompactedKey,
		GenAIRequestPreviousResponseIDKey, GenAIRequestReasoningLevelKey,
	} {
		assert.True(t, strings.HasPrefix(string(k), "gen_ai."), "%s", k)
		assert.NotEqual(t, GenAIUsageCacheCreationInputTokensKey, k)
	}
	assert.Equal(t, attribute.Key("gen_ai.usage.cache_write.input_tokens"), GenAIUsageCacheWriteInputTokensKey)
}

func TestParseGenAIConventions(t *testing.T) {
	tests := []struct {
		optIn string
		want  GenAIConventions
	}{
		{"", GenAIConventionsV1_41},
		{"http", GenAIConventionsV1_41},
		{"gen_ai_latest_experimental", GenAIConventionsLatestExperimental},
		{"http,gen_ai_latest_experimental", GenAIConventionsLatestExperimental},
		{" http , GEN_AI_LATEST_EXPERIMENTAL ", GenAIConventionsLatestExperimental},
		{"gen_ai_latest_experimental_not", GenAIConventionsV1_41},
		{"gen_ai", GenAIConventionsV1_41},
	}
	for _, tt := range tests {
		t.Run(tt.optIn, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseGenAIConventions(tt.optIn))
		})
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv(StabilityOptInEnv, "gen_ai_latest_experimental")
		assert.Equal(t, GenAIConventionsLatestExperimental, GenAIConventionsFromEnv())
		t.Setenv(StabilityOptInEnv, "")
		assert.Equal(t, GenAIConventionsV1_41, GenAIConventionsFromEnv())
	})
}

func TestConventionsDifferences(t *testing.T) {
	v141, latest := GenAIConventionsV1_41, GenAIConventionsLatestExperimental
	assert.Equal(t, GenAIUsageCacheCreationInputTokensKey.Int64(5), v141.UsageCacheWriteInputTokens(5))
	assert.Equal(t, GenAIUsageCacheWriteInputTokensKey.Int64(5), latest.UsageCacheWriteInputTokens(5))
	assert.Equal(t, GenAIRequestTopKKey.Float64(40), v141.RequestTopK(40))
	assert.Equal(t, GenAIRequestTopKKey.Int64(40), latest.RequestTopK(40))
	assert.Equal(t, GenAIRequestTopKKey.Float64(0.5), latest.RequestTopK(0.5), "never rounded")
	assert.Equal(t, GenAIRequestTopKKey.Float64(1e300), latest.RequestTopK(1e300), "out of int range stays a double")
	assert.Equal(t, "v1.41.0", v141.String())
	assert.Equal(t, "latest_experimental", latest.String())
}

func TestPayloadSizeKey(t *testing.T) {
	for _, k := range PayloadKeys {
		sk, ok := PayloadSizeKey(k)
		assert.True(t, ok, "%s", k)
		assert.Equal(t, string(k)+".size", string(sk))
	}
	_, ok := PayloadSizeKey(GenAIRequestModelKey)
	assert.False(t, ok)
}

func TestNamesAndProviders(t *testing.T) {
	assert.Equal(t, "chat", ChatSpanName(""))
	assert.Equal(t, "chat gpt-x", ChatSpanName("gpt-x"))
	assert.Equal(t, GenAIProviderNameOpenAI, ProviderForDialect(DialectResponses))
	assert.Equal(t, GenAIProviderNameOpenAI, ProviderForDialect(DialectChat))
	assert.Equal(t, GenAIProviderNameAnthropic, ProviderForDialect(DialectMessages))
	assert.Equal(t, "", ProviderForDialect("completions"))
}
