package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gymtrace/gymtrace/rollout"
)

// trainingCorrelation is the training agent's capture gates as NeMo Gym's agents derive them from
// a global config with observability_enabled and token_id_capture.enabled (SPEC §1.4): its base
// URLs carry /ng-rollout/<id>/training-token-capture.
var trainingCorrelation = rollout.Correlation{ModelCallCapture: true, TokenIDCapture: true}

// trainingTurns is the number of model calls of a training episode.
const trainingTurns = 4

// followUp is the user message after the training episode's second turn: check the result again.
func (t task) followUp() string {
	return fmt.Sprintf("Check it once more: %d %s %d.", t.a, t.op, t.b)
}

// plannedTraining is one rollout of the training run before it runs.
type plannedTraining struct {
	taskIndex, rolloutIndex int
	task                    task
	// reasonFirst makes the first turn ask for reasoning (reasoning_effort "low"): the chat
	// template drops the <think> block from the history, so the second turn's prompt re-tokenizes
	// the first turn and no longer extends it (the masked rollout).
	reasonFirst bool
}

// planTraining lays out the training run: two rollouts of task 0 (as a GRPO group samples one
// task several times), the second one re-tokenizing its first turn.
func planTraining() []plannedTraining {
	return []plannedTraining{
		{taskIndex: 0, rolloutIndex: 0, task: newTask(0)},
		{taskIndex: 0, rolloutIndex: 1, task: newTask(0), reasonFirst: true},
	}
}

func (p plannedTraining) runBody() []byte {
	return fmt.Appendf(nil, `{%q:%d,%q:%d}`, rollout.TaskIndexKey, p.taskIndex, rollout.IndexKey, p.rolloutIndex)
}

// trainingRequest is a Chat Completions request of the training agent: only what a client of a
// vLLM server sends; the proxy adds the token members (logprobs, top_logprobs, return_token_ids).
type trainingRequest struct {
	Model               string             `json:"model"`
	Messages            []any              `json:"messages"`
	Tools               []chatTool         `json:"tools"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
}

// trainingEpisode is what one training rollout's agent did.
type trainingEpisode struct {
	id     string
	calls  []Call
	answer string
}

// runTrainingEpisode plays training rollout p against the proxy at proxyURL, four Chat calls on
// one growing history (each answer appended as received, as the chat template expects): turn 1
// (JSON) is answered with a calculator call, whose result the agent computes in the sandboxed shell
// and sends back; turn 2 (streamed) with text quoting it; the agent then asks to check the result
// (task.followUp), and turns 3 (JSON, a calculator call) and 4 (streamed, text) repeat the pattern.
// The final answer is turn 4's text. Every call goes to trainingCorrelation's base URL +
// "/v1/chat/completions". The calls made so far are returned with an error.
func runTrainingEpisode(ctx context.Context, client *http.Client, proxyURL string, p plannedTraining) (ep trainingEpisode, err error) {
	base, err := trainingCorrelation.BaseURLForRun(proxyURL, p.runBody())
	if err != nil {
		return ep, fmt.Errorf("base url: %w", err)
	}
	if ep.id, _, err = rollout.IDFromRunBody(p.runBody()); err != nil {
		return ep, fmt.Errorf("rollout id: %w", err)
	}
	conv := &chatConversation{messages: []any{
		chatMessage{Role: "system", Content: systemPrompt},
		chatMessage{Role: "user", Content: p.task.prompt},
	}}
	var tool chatTool
	tool.Type = "function"
	tool.Function.Name, tool.Function.Description = toolName, toolDescription
	tool.Function.Parameters = json.RawMessage(toolSchema)

	turn := func(stream bool, reasoning string) (Call, error) {
		req := trainingRequest{
			Model: chatModel, Messages: conv.messages, Tools: []chatTool{tool},
			ReasoningEffort: reasoning, MaxCompletionTokens: maxOutputTokens, Stream: stream,
		}
		if stream {
			req.StreamOptions = &chatStreamOptions{IncludeUsage: true}
		}
		c := Call{Dialect: dialectChat, Stream: stream}
		read := conv.readJSON
		if stream {
			read = conv.readStream
		}
		err := post(ctx, client, base+"/v1"+conv.path(), req, &c, func(r io.Reader) error { return read(r, &c) })
		ep.calls = append(ep.calls, c)
		if err != nil {
			return c, fmt.Errorf("turn %d (stream %t): %w", len(ep.calls), stream, err)
		}
		return c, nil
	}

	// Turns 1 and 3 are answered with a calculator call (the tool is offered and the last message
	// is the user's), turns 2 and 4 with text quoting the tool's result.
	for k := 1; k <= trainingTurns; k++ {
		reasoning := ""
		if k == 1 && p.reasonFirst {
			reasoning = "low"
		}
		c, err := turn(k%2 == 0, reasoning)
		if err != nil {
			return ep, err
		}
		switch {
		case k%2 == 1 && len(c.ToolCalls) == 0:
			return ep, fmt.Errorf("turn %d: the model answered without a calculator call", k)
		case k%2 == 0 && len(c.ToolCalls) > 0:
			return ep, fmt.Errorf("turn %d: the model called a tool instead of answering", k)
		}
		for _, tc := range c.ToolCalls {
			result, err := execTool(ctx, tc)
			if err != nil {
				result = "error: " + err.Error() // reported to the model, as agents do
			}
			conv.addToolResult(tc, result)
		}
		if k == 2 {
			conv.messages = append(conv.messages, chatMessage{Role: "user", Content: p.task.followUp()})
		}
		ep.answer = c.Text
	}
	return ep, nil
}
