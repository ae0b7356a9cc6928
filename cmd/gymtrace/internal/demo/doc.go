// Package demo is the scenario behind `gymtrace demo`: gymtrace's whole main job, every layer
// real, in one process and a few seconds.
//
// [Run] starts the fake model server of package fakemodel on 127.0.0.1 (a real net/http server
// answering the OpenAI Responses, Chat Completions and Anthropic Messages APIs) and the capture
// capture proxy ([proxy.New]) in front of it, writing to <Dir>/captures with the model
// server name "policy_model". It then clears stale captures of the rollouts about to run (SPEC.md
// §2.6, as NeMo Gym's collector does before dispatch) and runs a small tool-using agent through the
// proxy, one episode per rollout. The agent is a plain HTTP client (net/http and encoding/json
// only): each rollout's run body {"_ng_task_index": t, "_ng_rollout_index": r} gives its base URL
// through [rollout.BaseURLForRun] (SPEC §1.2–§1.4), so every call carries "/ng-rollout/<t>-<r>". It
// records what the proxy cannot see with package agentobs (issue 4): its HTTP client is
// [proxy.NewHTTPClient] around [agentobs.Transport], which turns each answer's
// X-Gymtrace-Model-Call-Id header into a model-call reference, and its tracer provider has
// [proxy.RolloutIDGenerator] and an [agentobs.ObservationProcessor] writing the observation spans
// beside the captures.
//
// # The episode
//
// Rollout k (0-based) works on task k/2 as rollout index k%2 and speaks dialect k%3 (responses,
// chat, messages). The task is an arithmetic question; the request offers a "calculator" function
// tool and asks for reasoning. Each episode is the rollout's root span ([proxy.StartRollout]) and one
// agent invocation ("invoke_agent calculator-agent"):
//
//  1. The first call is answered with a tool call. The agent runs it as an "execute_tool
//     calculator" observation: the operation is evaluated by a sandboxed POSIX shell
//     ([agentobs.RunSandboxed], `sh -c` with the operands as positional parameters), a "sandbox
//     agent" observation with the measured wall time, CPU time and peak memory (null when the
//     shell exits before it can be sampled: never a guess).
//  2. The agent then compacts its history ("context_compaction", trigger "auto"): a summarizing
//     call (the history under the summarizer's instructions, tool_choice "none") whose answer
//     replaces the history; tokens_before is the context at the first call, tokens_after the
//     summary's tokens, both from the usage.
//  3. The final call on the compacted history (tool_choice "none") is answered with text.
//
// Calls alternate between streamed (server-sent events, read to the end of the body as a real
// client reads them) and not: rollouts with an even k stream the first and third call, the others
// the second, so three rollouts cover every dialect streamed and not streamed. The reward is 1.0
// when the final answer holds the right number, else 0.0.
//
// # The training run
//
// After the evaluation rollouts, Run runs a training run ([Training]) the way NeMo Gym runs one with
// token-id capture (docs/TOKENS.md, §0 T1–T6): the fake model server as a vLLM engine
// (fakemodel.WithEngine(fakemodel.EngineVLLM): its ChatML tokenizer, inline prompt_token_ids and
// token_ids, streamed ids per chunk) and a second capture proxy in front of it with token source
// vLLM ([proxy.WithTokenSource], `gymtrace proxy --token-source vllm`), writing capture records and
// token captures to <Dir>/training/captures. Two rollouts of task 0 ("0-0", "0-1") each make four
// Chat calls on one growing history through the token prefix
// (/ng-rollout/<id>/training-token-capture/v1, the base URL of a [rollout.Correlation] with both
// gates on): a calculator call (JSON), a text answer quoting its result (streamed), then, after
// the agent asks to check the result, the same again. Rollout 0-1's first call asks for reasoning
// (reasoning_effort "low"); the chat template drops that reasoning from the history, so its second
// prompt re-tokenizes the first turn instead of extending it.
//
// The rollout lines (identity keys, prompt, a Responses-shaped "response" holding the final answer,
// reward) are then attached exactly as `gymtrace attach` does it: rollouts.Attach with the
// ng_trajectory projection and the token finalization (freeze, prefix_merging build, the main
// chain's items replace response.output, mask_sample, _ng_token_capture), the output fsynced and
// renamed, and only then rollouts.Retire. Rollout 0-0 chains into one prefix: it is trainable (no
// mask_sample member, i.e. false) and its capture is retired (a tombstone state stays). Rollout 0-1
// has two roots and two chains: it is masked (mask_sample: true) and its token files stay for
// `gymtrace tokens`. Before the calls, the stale captures of both rollouts (tombstones included)
// are cleared, so a second run in the same directory starts afresh.
//
// # Files
//
// Under Config.Dir (a new temporary directory by default, kept afterwards):
//
//   - captures/<rollout_id>.capture.jsonl: one capture record per model call (SPEC §3.1), written
//     by the proxy;
//   - captures/<rollout_id>.observations.jsonl: the agent's observation spans (invocation, tool
//     call, sandbox run, compaction), written by its agentobs.ObservationProcessor;
//   - rollouts.jsonl: one line per rollout, {"_ng_task_index", "_ng_rollout_index", "prompt",
//     "response" (the final answer), "reward"}, UTF-8, newline-terminated;
//   - rollouts.attached.jsonl: the same lines with ng_model_call_capture added by
//     rollouts.Attach (SPEC §5.1) and ng_agent_observations: the observations file's bundle joined
//     with the captured calls (SPEC §5.4, §6.5);
//   - training/captures/<rollout_id>.capture.jsonl and <rollout_id>.tokens.* (docs/TOKENS.md §2:
//     .tokens.jsonl, .tokens.intents, .tokens.state.json, .tokens.lock), training/rollouts.jsonl
//     and training/rollouts.attached.jsonl: the training run's.
//
// The JSONL files are replaced as a whole (written beside their final name, then renamed).
// Running the demo again into the same directory replaces the captures of the same rollout ids.
//
// # Output
//
// Run prints to Config.Out the servers' addresses, where the files are, a table with one row per
// rollout computed from the capture files (calls, dialects, tokens in/out/reasoning, cached tokens,
// total latency in milliseconds, calls with an error category), a table of the attached agent
// observations (invocations, tool calls and their summed milliseconds, sandbox runs with their
// measured CPU seconds and peak MiB, compactions, model-call references and how many resolved to a
// captured call, gaps) with a line saying whether every reference resolved without a gap, and the
// `gymtrace calls` command that shows one rollout's records; then the training run: one row per
// call with its token entry's prompt and generated id counts and whether its prompt extends the
// previous call's prompt + generation, one row per finalized rollout (mask_sample, calls, chains,
// roots, output items, generated tokens delivered/captured, reward, capture retired or kept), the
// cause of each mask, the files and the `gymtrace tokens` command for the masked rollout. Warnings
// of the proxies go to Config.Err.
//
// # Lifecycle
//
// Run stops everything it started before it returns, on success and on failure: each proxy's HTTP
// server is shut down first (in-flight calls finish), then the capture handler
// ([proxy.Handler.Shutdown]), then the model server; the agent's tracer provider is shut down and its
// idle connections are closed. A failed observation write fails the run. It
// leaves no goroutine behind. Calls of Run with different directories may run concurrently.
package demo
