package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/gymtrace/gymtrace/agentobs"
)

// agentName is the agent's gen_ai.agent.name: its invocation span is "invoke_agent workload-agent".
const agentName = "workload-agent"

// What the agent says to the model.
const (
	systemPrompt = "You are a careful operations assistant. Use the run_workload tool to run workloads, " +
		"then report exactly what the sandbox measured."
	summarizerPrompt = "You compact conversations. Summarize the conversation you are given in a few sentences, " +
		"keeping every measured value."
	summaryInstruction = "Summarize the conversation so far for a fresh context."
	summaryPrefix      = "Summary of the conversation so far (earlier turns were compacted): "
	finalInstruction   = "Report the measured resource usage in one sentence."
)

// maxTaskTurns bounds the model calls of the task phase (tool call, tool result, ...).
const maxTaskTurns = 4

// Agent is a small tool-using agent speaking OpenAI Chat Completions through the openai-go client.
// One Run is one rollout's episode:
//
//  1. the task phase: call the model with the run_workload tool, run every tool call it asks for
//     in the sandbox (an execute_tool span with a sandbox span under it), send the results back,
//     until the model answers in text;
//  2. a compaction: a summarizing call (no tools) whose summary replaces the conversation, recorded
//     as a context_compaction with its tokens before and after;
//  3. a final, streamed call on the compacted context.
//
// Every model call goes through Client's HTTP client, whose agentobs.Transport turns the capture
// proxy's X-Gymtrace-Model-Call-Id answer header into a model-call reference of the invocation (or of
// the compaction in progress).
type Agent struct {
	Client  openai.Client // its HTTP client wraps agentobs.Transport (see main.go)
	Model   string        // the model asked for, e.g. "gpt-4.1-mini"
	Sandbox Sandbox       // where run_workload runs
	Logger  *slog.Logger  // progress, at Info; nil discards
}

// Result is what one Run did.
type Result struct {
	Answer     string      // the final answer's text
	ModelCalls []ModelCall // every model call that got an answer (error statuses too), in order
	ToolCalls  int         // tool calls run
}

// ModelCall is one model call of a Run as the agent saw it.
type ModelCall struct {
	Phase       string // "task", "summary" or "final"
	ModelCallID string // the capture proxy's X-Gymtrace-Model-Call-Id answer header ("" without a proxy)
	ResponseID  string // the completion's id
}

// Run runs one episode on task (see Agent) as one agent invocation of rec, and returns what it did.
// ctx should carry the rollout's root span (proxy.StartRollout). The invocation ends with Run, failed
// when Run returns an error; the calls made so far are in the Result either way.
func (a *Agent) Run(ctx context.Context, rec *agentobs.Recorder, task string) (res Result, err error) {
	logger := a.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, inv := rec.StartInvocation(ctx, agentName)
	defer func() { inv.End(err) }()
	logger.Info("invocation started", "invocation_id", inv.ID(), "rollout_id", rec.RolloutID())

	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(systemPrompt), openai.UserMessage(task)}
	var last *openai.ChatCompletion
	for turn := 0; ; turn++ {
		if turn == maxTaskTurns {
			return res, fmt.Errorf("no answer without a tool call after %d calls", maxTaskTurns)
		}
		c, _, err := a.complete(ctx, &res, "task", openai.ChatCompletionNewParams{
			Model: a.Model, Messages: msgs, Tools: []openai.ChatCompletionToolUnionParam{workloadTool()},
		})
		if err != nil {
			return res, err
		}
		last = c
		msg := c.Choices[0].Message
		msgs = append(msgs, msg.ToParam())
		if len(msg.ToolCalls) == 0 {
			break
		}
		for _, tc := range msg.ToolCalls {
			msgs = append(msgs, openai.ToolMessage(a.runToolCall(ctx, logger, tc), tc.ID))
			res.ToolCalls++
		}
	}

	summary, err := a.compact(ctx, logger, &res, msgs, last)
	if err != nil {
		return res, err
	}
	msgs = []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(systemPrompt),
		openai.UserMessage(summaryPrefix + summary),
		openai.UserMessage(finalInstruction),
	}
	res.Answer, err = a.stream(ctx, &res, openai.ChatCompletionNewParams{Model: a.Model, Messages: msgs})
	if err != nil {
		return res, err
	}
	logger.Info("invocation finished", "model_calls", len(res.ModelCalls), "tool_calls", res.ToolCalls)
	return res, nil
}

// runToolCall runs one tool call of the model as an execute_tool span (timed by the recorder) and
// returns its result text for the model; a failure becomes the result, as agents report it.
func (a *Agent) runToolCall(ctx context.Context, logger *slog.Logger, tc openai.ChatCompletionMessageToolCallUnion) string {
	tctx, tool := agentobs.StartToolCall(ctx, tc.Function.Name, tc.ID, agentobs.WithSandboxID(a.Sandbox.ID))
	out, err := a.toolResult(tctx, tc)
	tool.End(err)
	if err != nil {
		logger.Warn("tool call failed", "tool_call_id", tc.ID, "tool", tc.Function.Name, "error", err)
		if out == "" {
			out = "error: " + err.Error()
		}
	} else {
		logger.Info("tool call done", "tool_call_id", tc.ID, "tool", tc.Function.Name, "result", out)
	}
	return out
}

// toolResult runs tc: run_workload in the sandbox; any other tool is an error.
func (a *Agent) toolResult(ctx context.Context, tc openai.ChatCompletionMessageToolCallUnion) (string, error) {
	if tc.Type != "function" || tc.Function.Name != workloadToolName {
		return "", fmt.Errorf("tool %q: unknown (only the function %q exists)", tc.Function.Name, workloadToolName)
	}
	w, err := parseWorkload(tc.Function.Arguments)
	if err != nil {
		return "", fmt.Errorf("%s: %w", workloadToolName, err)
	}
	return a.Sandbox.run(ctx, w)
}

// compact replaces the conversation msgs by a summary: a summarizing model call made with the
// compaction's context (so it is the compaction's model call), recorded as a context_compaction
// whose tokens_before is the context size at the last call (its prompt plus completion tokens, as
// the model server counted them) and tokens_after the summary's size (its completion tokens less
// reasoning tokens).
func (a *Agent) compact(ctx context.Context, logger *slog.Logger, res *Result, msgs []openai.ChatCompletionMessageParamUnion, last *openai.ChatCompletion) (string, error) {
	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	req := append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(summarizerPrompt)}, msgs[1:]...)
	req = append(req, openai.UserMessage(summaryInstruction))
	c, mc, err := a.complete(cctx, res, "summary", openai.ChatCompletionNewParams{Model: a.Model, Messages: req})
	// SPEC §6.5: a compaction's model calls never confer ownership; the join resolves them only to
	// calls its invocation owns. The summarizing call — answered or failed, the proxy captured it —
	// is the invocation's call too, so it is recorded for the invocation as well (the recorder keeps
	// each reference once).
	if mc.ModelCallID != "" {
		if rerr := agentobs.RecordModelCall(ctx, mc.ModelCallID); rerr != nil {
			logger.Warn("record summarizing call", "error", rerr)
		}
	}
	if err != nil {
		comp.End(agentobs.CompactionResult{Err: err})
		return "", fmt.Errorf("compaction: %w", err)
	}
	summary := c.Choices[0].Message.Content
	before := int(last.Usage.PromptTokens + last.Usage.CompletionTokens)
	after := int(max(c.Usage.CompletionTokens-c.Usage.CompletionTokensDetails.ReasoningTokens, 0))
	comp.End(agentobs.CompactionResult{TokensBefore: &before, TokensAfter: &after, Summary: &summary})
	logger.Info("context compacted", "tokens_before", before, "tokens_after", after)
	return summary, nil
}

// complete makes one non-streamed call and returns it; a call that got an answer, even an error
// status, is appended to res.ModelCalls (the proxy captured it). The answer must have a choice.
func (a *Agent) complete(ctx context.Context, res *Result, phase string, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, ModelCall, error) {
	var resp *http.Response
	c, err := a.Client.Chat.Completions.New(ctx, params, option.WithResponseInto(&resp))
	mc := ModelCall{Phase: phase, ModelCallID: header(resp)}
	if c != nil {
		mc.ResponseID = c.ID
	}
	if resp != nil {
		res.ModelCalls = append(res.ModelCalls, mc)
	}
	if err != nil {
		return nil, mc, fmt.Errorf("%s call: %w", phase, err)
	}
	if len(c.Choices) == 0 {
		return nil, mc, fmt.Errorf("%s call: completion %s has no choices", phase, c.ID)
	}
	return c, mc, nil
}

// stream makes one streamed call (with the usage chunk), appends it to res.ModelCalls when it got
// an answer, and returns the text of its first choice.
func (a *Agent) stream(ctx context.Context, res *Result, params openai.ChatCompletionNewParams) (string, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var resp *http.Response
	s := a.Client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&resp))
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	err := errors.Join(s.Err(), s.Close())
	if resp != nil {
		res.ModelCalls = append(res.ModelCalls, ModelCall{Phase: "final", ModelCallID: header(resp), ResponseID: acc.ID})
	}
	if err != nil {
		return "", fmt.Errorf("final call: %w", err)
	}
	if len(acc.Choices) == 0 {
		return "", fmt.Errorf("final call: stream %s has no choices", acc.ID)
	}
	return acc.Choices[0].Message.Content, nil
}

// header is the capture proxy's model_call_id header of resp ("" when resp is nil or has none).
func header(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(agentobs.ModelCallIDHeader)
}
