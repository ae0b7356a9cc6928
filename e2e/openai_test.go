package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// weatherParameters is the JSON schema of the get_weather tool every tool scenario offers.
var weatherParameters = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city": map[string]any{"type": "string", "description": "City name"},
		"unit": map[string]any{"type": "string", "enum": []string{"c", "f"}},
	},
	"required": []string{"city", "unit"},
}

const weatherQuestion = "What is the weather in Oslo?"

// getWeather is the agent's tool: it answers from the call's JSON arguments.
func getWeather(t *testing.T, arguments string) string {
	t.Helper()
	var args struct {
		City string `json:"city"`
		Unit string `json:"unit"`
	}
	require.NoError(t, json.Unmarshal([]byte(arguments), &args), "tool arguments are JSON: %s", arguments)
	require.Equal(t, weatherQuestion, args.City, "the fake model fills the first string parameter with the question")
	return fmt.Sprintf("12 %s and sunny", strings.ToUpper(args.Unit))
}

// responsesStream calls the Responses API streaming and returns the final response (from
// response.completed) after checking the text deltas add up to its output text.
func responsesStream(t *testing.T, c *clients, params responses.ResponseNewParams) (callResult, responses.Response) {
	t.Helper()
	stream := c.openai.Responses.NewStreaming(ctx(t), params)
	var final *responses.Response
	var text strings.Builder
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			final = &r
		}
	}
	require.NoError(t, stream.Err())
	require.NoError(t, stream.Close())
	c.called(t)
	require.NotNil(t, final, "the stream ends with response.completed: %v", types)
	assert.Equal(t, "response.created", types[0])
	assert.Equal(t, final.OutputText(), text.String(), "text deltas add up to the final text")
	return fromResponse(t, *final, true), *final
}

// responsesCall calls the Responses API, streaming or not.
func responsesCall(t *testing.T, c *clients, params responses.ResponseNewParams, stream bool) (callResult, responses.Response) {
	t.Helper()
	if stream {
		return responsesStream(t, c, params)
	}
	r, err := c.openai.Responses.New(ctx(t), params)
	require.NoError(t, err)
	c.called(t)
	return fromResponse(t, *r, false), *r
}

func TestOpenAIResponses(t *testing.T) {
	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
		Name:        "get_weather",
		Description: openai.String("Current weather in a city"),
		Parameters:  weatherParameters,
	}}}
	toolTurn := func(stream bool) func(t *testing.T, c *clients) []callResult {
		return func(t *testing.T, c *clients) []callResult {
			user := responses.ResponseInputItemParamOfMessage(weatherQuestion, responses.EasyInputMessageRoleUser)
			firstParams := responses.ResponseNewParams{
				Model: "gpt-4.1-mini",
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{user}},
				Tools: tools,
			}
			first, r := responsesCall(t, c, firstParams, stream)
			require.Len(t, r.Output, 1)
			require.Equal(t, "function_call", r.Output[0].Type)
			call := r.Output[0].AsFunctionCall()
			assert.Equal(t, "get_weather", call.Name)
			output := getWeather(t, call.Arguments)

			second := responses.ResponseNewParams{
				Model: "gpt-4.1-mini",
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{
					user,
					responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
					{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
						CallID: openai.String(call.CallID),
						Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(output)},
					}},
				}},
				Tools: tools,
			}
			final, _ := responsesCall(t, c, second, stream)
			assert.Empty(t, final.ToolCalls)
			assert.Contains(t, final.Text, output, "the final answer uses the tool result")
			assert.Positive(t, *final.CachedTokens, "the second turn re-sends the first: cached tokens")
			return []callResult{first, final}
		}
	}
	runScenarios(t, []scenario{
		{"plain", func(t *testing.T, c *clients) []callResult {
			r, err := c.openai.Responses.New(ctx(t), responses.ResponseNewParams{
				Model: "gpt-4.1-mini",
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Name a primary colour.")},
			})
			require.NoError(t, err)
			c.called(t)
			assert.Equal(t, responses.ResponseStatusCompleted, r.Status)
			assert.Contains(t, r.OutputText(), "Name a primary colour.")
			return []callResult{fromResponse(t, *r, false)}
		}},
		{"stream_reasoning", func(t *testing.T, c *clients) []callResult {
			res, _ := responsesStream(t, c, responses.ResponseNewParams{
				Model:     "o4-mini",
				Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("Which is cheaper, A or B?")},
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto},
			})
			require.NotNil(t, res.Reasoning, "a reasoning summary")
			assert.Positive(t, *res.TokensReasoning)
			return []callResult{res}
		}},
		{"tool_turn", toolTurn(false)},
		{"tool_turn_stream", toolTurn(true)},
	})
}

func TestOpenAIChat(t *testing.T) {
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather in a city"),
		Parameters:  weatherParameters,
	})}
	// chatCall makes one Chat Completions call, streaming (with include_usage) or not, and
	// returns the completion the client assembled.
	chatCall := func(t *testing.T, c *clients, params openai.ChatCompletionNewParams, stream bool) (callResult, openai.ChatCompletion) {
		t.Helper()
		if !stream {
			r, err := c.openai.Chat.Completions.New(ctx(t), params)
			require.NoError(t, err)
			c.called(t)
			return fromChat(t, *r, false, chatReasoning(t, r.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw())), *r
		}
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := c.openai.Chat.Completions.NewStreaming(ctx(t), params)
		acc := openai.ChatCompletionAccumulator{}
		var reasoning strings.Builder
		sawUsageChunk := false
		for s.Next() {
			chunk := s.Current()
			require.True(t, acc.AddChunk(chunk), "the accumulator accepts every chunk")
			if len(chunk.Choices) == 0 {
				sawUsageChunk = true
				assert.Positive(t, chunk.Usage.TotalTokens)
			}
			for _, ch := range chunk.Choices {
				reasoning.WriteString(chatReasoning(t, ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()))
			}
		}
		require.NoError(t, s.Err())
		require.NoError(t, s.Close())
		c.called(t)
		assert.True(t, sawUsageChunk, "include_usage gives a final chunk with choices []")
		return fromChat(t, acc.ChatCompletion, true, reasoning.String()), acc.ChatCompletion
	}
	toolTurn := func(stream bool) func(t *testing.T, c *clients) []callResult {
		return func(t *testing.T, c *clients) []callResult {
			messages := []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("You are a weather assistant."),
				openai.UserMessage(weatherQuestion),
			}
			first, completion := chatCall(t, c, openai.ChatCompletionNewParams{Model: "gpt-4.1-mini", Messages: messages, Tools: tools}, stream)
			assert.Equal(t, "tool_calls", *first.FinishReason)
			msg := completion.Choices[0].Message
			require.Len(t, msg.ToolCalls, 1)
			call := msg.ToolCalls[0]
			assert.Equal(t, "get_weather", call.Function.Name)
			output := getWeather(t, call.Function.Arguments)
			messages = append(messages, msg.ToParam(), openai.ToolMessage(output, call.ID))
			final, _ := chatCall(t, c, openai.ChatCompletionNewParams{Model: "gpt-4.1-mini", Messages: messages, Tools: tools}, stream)
			assert.Equal(t, "stop", *final.FinishReason)
			assert.Empty(t, final.ToolCalls)
			assert.Contains(t, final.Text, output, "the final answer uses the tool result")
			assert.Positive(t, *final.CachedTokens)
			return []callResult{first, final}
		}
	}
	runScenarios(t, []scenario{
		{"plain", func(t *testing.T, c *clients) []callResult {
			res, _ := chatCall(t, c, openai.ChatCompletionNewParams{
				Model:    "gpt-4.1-mini",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Name a primary colour.")},
			}, false)
			assert.Contains(t, res.Text, "Name a primary colour.")
			return []callResult{res}
		}},
		{"stream_reasoning", func(t *testing.T, c *clients) []callResult {
			res, _ := chatCall(t, c, openai.ChatCompletionNewParams{
				Model:           "o4-mini",
				ReasoningEffort: shared.ReasoningEffortLow,
				Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which is cheaper, A or B?")},
			}, true)
			require.NotNil(t, res.Reasoning)
			assert.Positive(t, *res.TokensReasoning)
			return []callResult{res}
		}},
		{"tool_turn", toolTurn(false)},
		{"tool_turn_stream", toolTurn(true)},
	})
}
