// Package sdk connects agents and model servers to gymtrace's per-rollout model-call capture.
//
// Rollout identity (ids, the URL prefix, trace ids, correlation rules, SPEC §1) lives in package
// rollout; this package applies it:
//
//   - Prefix handling on the model-server side (SPEC §1.5–§1.6, D12): the handler parses each
//     request with rollout.ParseRequestPath, strips the prefix, and answers what SPEC §0 D12
//     refuses (an invalid id, a percent-encoded separator in the prefix, a dot segment) itself with
//     HTTP 400 (InvalidRolloutIDBody); CapturedDialect says which stripped
//     paths are captured. A model-call span's parent is rollout.ID.ParentForModelCall, in the run
//     namespace of WithRunID (captures then go to dir/<run>).
//   - Agent side (DESIGN.md "Trace per rollout"): StartRollout emits the rollout root span with the
//     rollout's fixed ids (the agent's provider needs RolloutIDGenerator) and NewHTTPClient wraps
//     otelhttp to send traceparent and baggage, so rollout root → agent spans → HTTP client spans →
//     model-call spans form one tree.
//   - Correlation without the prefix: rollout.FromRequest reads the id from the path prefix, else
//     the X-Gymtrace-Rollout-Id header, else the gymtrace.rollout_id baggage member
//     (rollout.ContextWithID); a captured call naming none is counted (gymtrace.capture.uncorrelated_calls) and
//     logged, and captured under WithUncorrelatedRolloutID's id when given.
//   - Capture (SPEC §1.6, §3, §4, §0 "Durability contract", D3–D5, D12): CaptureHandler wraps any Go
//     model server and NewProxy forwards to one configured upstream. Both strip the prefix always,
//     record every call to the three captured endpoints as a CLIENT span "chat {model}" in the
//     rollout's trace, and write its capture record durably (through the exporter package's durable
//     span processor, fsync included) before the client can observe the end of the call. Bytes reach
//     the client unchanged, read by read; capture never depends on sampling.
//   - Model-call span attributes (SPEC §0 "Spans"; capture.ExchangeAttributes is the one mapping):
//     the GenAI conventions of semconv/v1.41.0 — or the latest experimental ones when
//     OTEL_SEMCONV_STABILITY_OPT_IN lists gen_ai_latest_experimental, read once at construction
//     (WithGenAIConventions overrides) — request parameters, usage, server.address/port, error.type
//     and status Error on failure; WithMessageContent adds gen_ai.input.messages /
//     gen_ai.output.messages. The handler's provider applies no attribute length or count limit,
//     so payloads on the span are always whole.
//
// A Go agent points its OpenAI or Anthropic client at rollout.BaseURLForRun(base, runBody) + "/v1";
// each call then carries "/ng-rollout/<id>" and is captured into "<id>.capture.jsonl" by the capture
// middleware or proxy in front of the model server.
package sdk
