// Package demo is the scenario behind `gymtrace demo`: gymtrace's whole main job, every layer
// real, in one process and a few seconds.
//
// [Run] starts the fake model server of package fakemodel on 127.0.0.1 (a real net/http server
// answering the OpenAI Responses, Chat Completions and Anthropic Messages APIs) and the capture
// proxy of package sdk ([sdk.NewProxy]) in front of it, writing to <Dir>/captures with the model
// server name "policy_model". It then clears stale captures of the rollouts about to run (SPEC.md
// §2.6, as NeMo Gym's collector does before dispatch) and runs a small tool-using agent through the
// proxy, one episode per rollout. The agent is a plain HTTP client (net/http and encoding/json
// only): each rollout's run body {"_ng_task_index": t, "_ng_rollout_index": r} gives its base URL
// through [sdk.BaseURLForRun] (SPEC §1.2–§1.4), so every call carries "/ng-rollout/<t>-<r>".
//
// # The episode
//
// Rollout k (0-based) works on task k/2 as rollout index k%2 and speaks dialect k%3 (responses,
// chat, messages). The task is an arithmetic question; the request offers a "calculator" function
// tool and asks for reasoning. The first call is answered with a tool call, the agent runs the
// tool locally and sends its result in a second call, which is answered with the final text. One
// of the two calls is streamed (server-sent events, read to the end of the body as a real client
// reads them) and the other is not: rollouts with an even k stream the first call, the others the
// second, so three rollouts cover every dialect streamed and not streamed. The reward is 1.0 when
// the final answer holds the right number, else 0.0.
//
// # Files
//
// Under Config.Dir (a new temporary directory by default, kept afterwards):
//
//   - captures/<rollout_id>.capture.jsonl: one capture record per model call (SPEC §3.1), written
//     by the proxy;
//   - rollouts.jsonl: one line per rollout, {"_ng_task_index", "_ng_rollout_index", "prompt",
//     "response" (the final answer), "reward"}, UTF-8, newline-terminated;
//   - rollouts.attached.jsonl: the same lines with ng_model_call_capture added by
//     rollouts.Attach (SPEC §5.1).
//
// Both JSONL files are replaced as a whole (written beside their final name, then renamed).
// Running the demo again into the same directory replaces the captures of the same rollout ids.
//
// # Output
//
// Run prints to Config.Out the servers' addresses, where the files are, a table with one row per
// rollout computed from the capture files (calls, dialects, tokens in/out/reasoning, cached tokens,
// total latency in milliseconds, calls with an error category) and the `gymtrace calls` command that
// shows one rollout's records. Warnings of the proxy go to Config.Err.
//
// # Lifecycle
//
// Run stops everything it started before it returns, on success and on failure: the proxy's HTTP
// server is shut down first (in-flight calls finish), then the capture handler
// ([sdk.Handler.Shutdown]), then the model server; the agent's idle connections are closed. It
// leaves no goroutine behind. Calls of Run with different directories may run concurrently.
package demo
