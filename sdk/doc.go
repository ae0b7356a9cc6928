// Package sdk connects agents and model servers to gymtrace's per-rollout model-call capture.
//
// It owns the rollout identity of SPEC.md §1 and the trace identity of DESIGN.md:
//
//   - Rollout ids (SPEC §1.1–§1.2, D10): MaybeRolloutIDFromRunBody and RolloutIDFromRunJSON derive
//     the id of a run request exactly as NeMo Gym does: an explicit "_ng_rollout_id" matching
//     RolloutIDPattern, else "<task>-<rollout>" built with Python's str(), plus "-a<n>" for a
//     re-dispatch attempt read with Python's int().
//   - Agent URL helpers (SPEC §1.3–§1.4): RolloutPathPrefix and ApplyRolloutPrefix build the
//     "/ng-rollout/<id>[/training-token-capture]" prefix; a Correlation (from the raw global config,
//     CorrelationFromGlobalConfig) gates them per agent; BaseURLForRun and URLPathForRun are the
//     always-on shortcuts for Go agents, URLPathForRequest keeps an inbound request's rollout.
//   - Prefix parsing on the model-server side (SPEC §1.5–§1.6, D12): ParsePrefix splits a decoded
//     request path into rollout id, token-capture flag and the rest to forward; CapturedDialect
//     says which stripped paths are captured; ValidatePrefixID and InvalidRolloutIDBody refuse ids
//     that are not safe file names with HTTP 400.
//   - Rollout traces (DESIGN.md "Trace per rollout"): RolloutTraceID and RolloutRootSpanID derive a
//     rollout's trace from its id alone (SHA-256 of "gymtrace/rollout/" + id), and
//     ParentForModelCall picks a model-call span's parent and links. The *InRun variants
//     (RolloutTraceIDInRun, ParentForModelCallInRun, ...) hash "gymtrace/rollout/<run>/<id>" for a
//     run namespace (WithRunID, WithRolloutRunID; ValidateRunID, RunCaptureDir: captures in dir/<run>).
//   - Agent side (DESIGN.md "Trace per rollout"): StartRollout emits the rollout root span with the
//     rollout's fixed ids (the agent's provider needs RolloutIDGenerator) and NewHTTPClient wraps
//     otelhttp to send traceparent and baggage, so rollout root → agent spans → HTTP client spans →
//     model-call spans form one tree.
//   - Correlation without the prefix: RolloutIDFromRequest reads the id from the path prefix, else
//     the X-Gymtrace-Rollout-Id header, else the gymtrace.rollout_id baggage member
//     (ContextWithRolloutID); a captured call naming none is counted (Handler.CorrelationStats) and
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
// A Go agent points its OpenAI or Anthropic client at BaseURLForRun(base, runBody) + "/v1"; each call
// then carries "/ng-rollout/<id>" and is captured into "<id>.capture.jsonl" by the capture middleware
// or proxy in front of the model server.
//
// Run bodies and configs are decoded JSON: decode with json.Decoder.UseNumber so that integers and
// floats keep Python's distinction ("3" is the int 3, "3.0" the float 3.0, and str() differs).
//
// The identity helpers are pure (no I/O, no goroutines, no globals besides
// constants) and safe for concurrent use; malformed input yields errors, never panics.
package sdk
