package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// maxCalls bounds the model calls of one episode; the fake model finishes in three.
const maxCalls = 6

// agentName is the demo agent's gen_ai.agent.name: its spans are "invoke_agent calculator-agent".
const agentName = "calculator-agent"

// plannedRollout is one rollout before it runs: its identity, task and way of talking.
type plannedRollout struct {
	k            int    // position in the run, 0-based
	taskIndex    int    // _ng_task_index
	rolloutIndex int    // _ng_rollout_index
	dialect      string // dialect of every call
	streamFirst  bool   // the first call is streamed, the second not (and so on alternating)
	task         task
}

// planRollouts lays out n rollouts: rollout k is task k/2, rollout index k%2, dialect k%3, and
// streams its first call when k is even.
func planRollouts(n int) []plannedRollout {
	out := make([]plannedRollout, n)
	for k := range out {
		out[k] = plannedRollout{
			k:            k,
			taskIndex:    k / 2,
			rolloutIndex: k % 2,
			dialect:      dialects[k%len(dialects)],
			streamFirst:  k%2 == 0,
			task:         newTask(k / 2),
		}
	}
	return out
}

// runBody is the rollout's run request body as NeMo Gym's collector sends it to an agent (the
// identity keys of SPEC §1.1) as JSON.
func (p plannedRollout) runBody() []byte {
	return fmt.Appendf(nil, `{%q:%d,%q:%d}`, rollout.TaskIndexKey, p.taskIndex, rollout.IndexKey, p.rolloutIndex)
}

// episode is what one rollout's agent did.
type episode struct {
	id     string // rollout id the base URL carried
	calls  []Call
	answer string // final answer text
}

// runEpisode plays rollout p against the capture proxy at proxyURL: it derives the rollout's base
// URL from its run body (rollout.BaseURLForRun + "/v1"), starts the rollout's root span
// (proxy.StartRollout) and one agent invocation recorded by an agentobs.Recorder on tp, then calls
// the model, runs each requested tool call in the sandbox (runTool) and sends its result back,
// until the model answers without a tool call. After the first tool results the agent compacts its
// history (compact): a summarizing call replaces it, and the calls after it forbid tool calls. The
// calls made so far are returned with an error; the invocation then ends failed.
//
// client should wrap agentobs.Transport, which turns each answer's X-Gymtrace-Model-Call-Id header
// into a model-call reference of the invocation (or the compaction) in the request's context. A nil
// tp records no spans (the invocation still runs).
func runEpisode(ctx context.Context, client *http.Client, tp trace.TracerProvider, proxyURL string, p plannedRollout) (ep episode, err error) {
	base, err := rollout.BaseURLForRun(proxyURL, p.runBody())
	if err != nil {
		return episode{}, fmt.Errorf("base url: %w", err)
	}
	id, _, err := rollout.IDFromRunBody(p.runBody())
	if err != nil {
		return episode{}, fmt.Errorf("rollout id: %w", err)
	}
	ep.id = id
	conv, err := newConversation(p.dialect, p.task)
	if err != nil {
		return ep, err
	}
	rec, err := agentobs.NewRecorder(tp, id)
	if err != nil {
		return ep, err
	}
	ctx, root := proxy.StartRollout(ctx, tp, id)
	defer root.End()
	ctx, inv := rec.StartInvocation(ctx, agentName)
	defer func() { inv.End(err) }()

	compacted := false
	for len(ep.calls) < maxCalls {
		c, err := ep.call(ctx, client, base, conv, p, false)
		if err != nil {
			return ep, err
		}
		if len(c.ToolCalls) == 0 {
			ep.answer = c.Text
			return ep, nil
		}
		for _, tc := range c.ToolCalls {
			conv.addToolResult(tc, runTool(ctx, tc))
		}
		if !compacted {
			if err := ep.compact(ctx, client, base, conv, p); err != nil {
				return ep, err
			}
			compacted = true
		}
	}
	return ep, fmt.Errorf("no final answer after %d calls", maxCalls)
}

// call makes the episode's next model call (the summarizing call when summary is set) and appends
// it to ep.calls. Calls alternate between streamed and not, starting as p says.
func (ep *episode) call(ctx context.Context, client *http.Client, base string, conv conversation, p plannedRollout, summary bool) (Call, error) {
	n := len(ep.calls)
	c := Call{Dialect: p.dialect, Stream: (n%2 == 0) == p.streamFirst}
	read := conv.readJSON
	if c.Stream {
		read = conv.readStream
	}
	err := post(ctx, client, base+"/v1"+conv.path(), conv.request(c.Stream, summary), &c, func(r io.Reader) error { return read(r, &c) })
	ep.calls = append(ep.calls, c)
	if err != nil {
		return c, fmt.Errorf("call %d (%s, stream %t): %w", n+1, p.dialect, c.Stream, err)
	}
	return c, nil
}

// compact is the episode's context compaction (trigger "auto"): a summarizing call made with the
// compaction's context, so it is the compaction's model call, whose answer replaces the history
// (conversation.compact). tokens_before is the context size at the last call (its tokens in and
// out as the capture record counts them), tokens_after the summary's output tokens less reasoning
// tokens where the dialect reports them.
func (ep *episode) compact(ctx context.Context, client *http.Client, base string, conv conversation, p plannedRollout) error {
	before := int(contextTokens(ep.calls[len(ep.calls)-1]))
	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	c, err := ep.call(cctx, client, base, conv, p, true)
	ep.calls[len(ep.calls)-1].Compaction = true
	// SPEC §6.5: a compaction's model calls never confer ownership; the join resolves them only to
	// calls its invocation owns. The summarizing call — answered or failed, it was captured — is the
	// invocation's call too, so it is recorded for the invocation as well (the recorder keeps each
	// reference once).
	if c.ModelCallID != "" {
		err = errors.Join(err, agentobs.RecordModelCall(ctx, c.ModelCallID))
	}
	if err != nil {
		comp.End(agentobs.CompactionResult{Err: err})
		return fmt.Errorf("compaction: %w", err)
	}
	after := int(summaryTokens(c))
	comp.End(agentobs.CompactionResult{TokensBefore: &before, TokensAfter: &after, Summary: &c.Text})
	conv.compact(c.Text)
	return nil
}

// contextTokens is the size of the conversation at call c: its prompt tokens (cache reads and
// writes included, as SPEC §3.5 counts Anthropic's) plus its output tokens.
func contextTokens(c Call) int64 {
	u := c.Usage
	n := u.InputTokens + u.OutputTokens
	if c.Dialect == dialectMessages {
		n += u.CachedTokens
		if u.CacheCreationTokens != nil {
			n += *u.CacheCreationTokens
		}
	}
	return n
}

// summaryTokens is the size of a summary: the call's output tokens less its reasoning tokens when
// the dialect reports them (Anthropic does not: its thinking tokens are included).
func summaryTokens(c Call) int64 {
	n := c.Usage.OutputTokens
	if c.Usage.ReasoningTokens != nil {
		n -= *c.Usage.ReasoningTokens
	}
	return max(n, 0)
}
