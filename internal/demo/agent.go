package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/gymtrace/gymtrace/sdk"
)

// maxTurns bounds the model calls of one episode; the fake model finishes in two.
const maxTurns = 4

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
// identity keys of SPEC §1.1), decoded the way sdk expects.
func (p plannedRollout) runBody() map[string]any {
	return map[string]any{sdk.TaskIndexKey: p.taskIndex, sdk.RolloutIndexKey: p.rolloutIndex}
}

// episode is what one rollout's agent did.
type episode struct {
	id     string // rollout id the base URL carried
	calls  []Call
	answer string // final answer text
}

// runEpisode plays rollout p against the capture proxy at proxyURL: it derives the rollout's base
// URL from its run body (sdk.BaseURLForRun + "/v1"), calls the model, runs each requested tool call
// and sends its result back, until the model answers without a tool call. The calls made so far are
// returned with an error.
func runEpisode(ctx context.Context, client *http.Client, proxyURL string, p plannedRollout) (episode, error) {
	base, err := sdk.BaseURLForRun(proxyURL, p.runBody())
	if err != nil {
		return episode{}, fmt.Errorf("base url: %w", err)
	}
	id, _, err := sdk.MaybeRolloutIDFromRunBody(p.runBody())
	if err != nil {
		return episode{}, fmt.Errorf("rollout id: %w", err)
	}
	ep := episode{id: id}
	conv, err := newConversation(p.dialect, p.task)
	if err != nil {
		return ep, err
	}
	for turn := range maxTurns {
		c := Call{Dialect: p.dialect, Stream: (turn%2 == 0) == p.streamFirst}
		read := conv.readJSON
		if c.Stream {
			read = conv.readStream
		}
		err := post(ctx, client, base+"/v1"+conv.path(), conv.request(c.Stream), &c,
			func(r io.Reader) error { return read(r, &c) })
		ep.calls = append(ep.calls, c)
		if err != nil {
			return ep, fmt.Errorf("call %d (%s, stream %t): %w", turn+1, p.dialect, c.Stream, err)
		}
		if len(c.ToolCalls) == 0 {
			ep.answer = c.Text
			return ep, nil
		}
		for _, tc := range c.ToolCalls {
			conv.addToolResult(tc, runTool(tc))
		}
	}
	return ep, fmt.Errorf("no final answer after %d calls", maxTurns)
}

// runTool runs one tool call and returns its result text; a failure is reported to the model as
// the result, as agents do.
func runTool(tc ToolCall) string {
	if tc.Name != toolName {
		return fmt.Sprintf("error: unknown tool %q (only %q exists)", tc.Name, toolName)
	}
	out, err := calculator(tc.Arguments)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}
