package e2e

import (
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messagesCall makes one Anthropic Messages call, streaming or not, and returns the message the
// client assembled (for streams, with the SDK's own Message.Accumulate).
func messagesCall(t *testing.T, c *clients, params anthropic.MessageNewParams, stream bool) (callResult, anthropic.Message) {
	t.Helper()
	if !stream {
		m, err := c.anthropic.Messages.New(ctx(t), params)
		require.NoError(t, err)
		c.called(t)
		return fromMessage(t, *m, false), *m
	}
	s := c.anthropic.Messages.NewStreaming(ctx(t), params)
	var m anthropic.Message
	var types []string
	var text strings.Builder
	for s.Next() {
		ev := s.Current()
		types = append(types, ev.Type)
		require.NoError(t, m.Accumulate(ev))
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			text.WriteString(ev.Delta.Text)
		}
	}
	require.NoError(t, s.Err())
	require.NoError(t, s.Close())
	c.called(t)
	require.NotEmpty(t, types)
	assert.Equal(t, "message_start", types[0])
	assert.Equal(t, "message_stop", types[len(types)-1])
	res := fromMessage(t, m, true)
	assert.Equal(t, res.Text, text.String(), "text deltas add up to the text blocks")
	return res, m
}

func TestAnthropicMessages(t *testing.T) {
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name:        "get_weather",
		Description: anthropic.String("Current weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties: weatherParameters["properties"],
			Required:   []string{"city", "unit"},
		},
	}}}
	system := []anthropic.TextBlockParam{{
		Text:         "You are a weather assistant. " + strings.Repeat("Answer briefly. ", 20),
		CacheControl: anthropic.NewCacheControlEphemeralParam(),
	}}
	toolTurn := func(stream bool) func(t *testing.T, c *clients) []callResult {
		return func(t *testing.T, c *clients) []callResult {
			messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(weatherQuestion))}
			params := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 1024, System: system, Messages: messages, Tools: tools}
			first, m := messagesCall(t, c, params, stream)
			assert.Equal(t, "tool_use", *first.FinishReason)
			require.Len(t, first.ToolCalls, 1)
			var use anthropic.ToolUseBlock
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					use = b.AsToolUse()
				}
			}
			assert.Equal(t, "get_weather", use.Name)
			output := getWeather(t, string(use.Input))
			params.Messages = append(messages, m.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, output, false)))
			final, _ := messagesCall(t, c, params, stream)
			assert.Equal(t, "end_turn", *final.FinishReason)
			assert.Empty(t, final.ToolCalls)
			assert.Contains(t, final.Text, output, "the final answer uses the tool result")
			assert.Positive(t, *final.CachedTokens, "the second turn reads the cache")
			assert.Positive(t, *final.CacheCreation, "the cache_control prefix is written")
			return []callResult{first, final}
		}
	}
	runScenarios(t, []scenario{
		{"plain", func(t *testing.T, c *clients) []callResult {
			res, _ := messagesCall(t, c, anthropic.MessageNewParams{
				Model:     "claude-sonnet-4-5",
				MaxTokens: 1024,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Name a primary colour."))},
			}, false)
			assert.Contains(t, res.Text, "Name a primary colour.")
			return []callResult{res}
		}},
		{"stream_thinking", func(t *testing.T, c *clients) []callResult {
			res, m := messagesCall(t, c, anthropic.MessageNewParams{
				Model:     "claude-sonnet-4-5",
				MaxTokens: 2048,
				Thinking:  anthropic.ThinkingConfigParamOfEnabled(1024),
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which is cheaper, A or B?"))},
			}, true)
			require.NotNil(t, res.Reasoning, "a thinking block")
			require.NotEmpty(t, m.Content)
			assert.NotEmpty(t, m.Content[0].Signature, "signature_delta assembled")
			return []callResult{res}
		}},
		{"tool_turn", toolTurn(false)},
		{"tool_turn_stream", toolTurn(true)},
	})
}
