// Command agent is gymtrace's example agent: a small tool-using agent that runs one rollout through
// the gymtrace capture proxy with the official openai-go client and records what the proxy cannot
// see — its invocation, tool call, sandbox run and context compaction — with package agentobs, as
// spans in the rollout's trace and as the rollout's ng_agent_observations.
//
// Usage:
//
//	agent --base-url http://127.0.0.1:8000 --task-index 3 --rollout-index 1 --capture-dir /abs/captures \
//	      [--otlp-endpoint http://127.0.0.1:4318] [--bundle-out bundle.json] [--embed-observations] > rollout.jsonl
//	gymtrace attach --capture-dir /abs/captures --input rollout.jsonl --output rollout.attached.jsonl
//
// # The episode
//
// The agent ([Agent.Run]) asks the model (Chat Completions, through
// <base-url>/ng-rollout/<rollout-id>/v1) to do its task with one tool, run_workload. It runs each
// tool call the model makes as a sandboxed command measured by agentobs.RunSandboxed — this very
// binary in workload mode (`agent workload --memory-mib N --cpu-seconds S`), which touches N MiB of
// memory and burns S seconds of its own CPU time — and sends the measured result back. Then it
// compacts its context (a summarizing call, tokens before and after from the usage the model server
// reported) and makes a final, streamed call on the compacted context.
//
// # Observations
//
// The HTTP client of the openai-go client is proxy.NewHTTPClient around agentobs.Transport: every
// request is a client span carrying traceparent (the proxy's model-call span nests under it), and
// every answer's X-Gymtrace-Model-Call-Id header becomes a model-call reference of the invocation
// (or of the compaction in progress). The tracer provider has proxy.RolloutIDGenerator (the rollout
// root span of proxy.StartRollout gets the rollout's trace id), an agentobs.ObservationProcessor that
// appends every observation span to <capture-dir>/<rollout-id>.observations.jsonl beside the
// proxy's capture file, and, with --otlp-endpoint, an OTLP/HTTP batch exporter. The spans:
//
//	rollout <id>
//	└── invoke_agent workload-agent
//	    ├── HTTP client span → chat <model> (proxy)        the task calls
//	    ├── execute_tool run_workload
//	    │   └── sandbox agent                               the measured workload
//	    ├── context_compaction
//	    │   └── HTTP client span → chat <model> (proxy)    the summarizing call
//	    └── HTTP client span → chat <model> (proxy)        the final call
//
// # Output
//
// Stdout gets the rollout line, {"_ng_task_index", "_ng_rollout_index", ["_ng_rollout_id",] "prompt",
// "response"} (the identity keys as Gym's collector copies them, SPEC §5.5 step 1) plus, with
// --embed-observations, "ng_agent_observations": the recorder's bundle. `gymtrace attach` joins that
// bundle — or, when the line has none, the bundle of the observations file — with the captured
// calls (SPEC §5.4, §6.5). --bundle-out writes the bundle alone. Progress goes to stderr. Exit status
// 0 on success, 1 on failure, 2 on a usage error.
package main
